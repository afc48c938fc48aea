import type { Manifest } from '../../manifest/model.js';
import { FolderFileError, type FolderPin, pinManifestFolder } from '../../storage/folder-file.js';

/**
 * Where an input's `artwork:` files are read from: a folder pinned by the caller (`watch`: the
 * drop folder the manifest was dropped in, not the private copy it is read from), the
 * manifest's own folder (`manifest`: pinned where the manifest was read), or nowhere (`none`:
 * an input taken from a bucket has no folder of its own).
 */
export type ArtworkFolder = FolderPin | 'manifest' | 'none';

/**
 * One input's artwork files: the folder they are read from (pinned once), the bytes of
 * distinct files it may name in all (setting artworkMaxInputBytes), and its uploads (one per
 * key however many lines name the file).
 */
export class InputArtworkFiles {
  private pinned: Promise<FolderPin> | undefined;
  private bytes = 0;
  private readonly counted = new Set<string>();
  private readonly uploads = new Map<string, Promise<boolean>>();

  constructor(
    private readonly manifest: Pick<Manifest, 'file' | 'sha256'>,
    private readonly where: ArtworkFolder,
    private readonly maxBytes: number,
  ) {}

  /** The folder the input's files are read from; a FolderFileError when there is none. */
  folder(): Promise<FolderPin> {
    if (this.where === 'none')
      return Promise.reject(
        new FolderFileError(
          'cannot be read: an input taken from a bucket has no folder of files (give externalArtworkUrl)',
        ),
      );
    if (this.where !== 'manifest') return Promise.resolve(this.where);
    this.pinned ??= pinManifestFolder(this.manifest.file, this.manifest.sha256);
    return this.pinned;
  }

  /** Counts a file (by identity, once) against the input's cap; why not, when it would pass it. */
  readonly admit = (id: string, size: number): string | undefined => {
    if (this.counted.has(id)) return undefined;
    if (this.bytes + size > this.maxBytes)
      return (
        `would bring the artwork files this input names to ${this.bytes + size} bytes, ` +
        `over the ${this.maxBytes}-byte limit (setting artworkMaxInputBytes)`
      );
    this.counted.add(id);
    this.bytes += size;
    return undefined;
  };

  /** `upload` once per key for this input: every other line naming the same content shares it. */
  uploadOnce(key: string, upload: () => Promise<boolean>): Promise<boolean> {
    const known = this.uploads.get(key);
    if (known) return known.then(() => false);
    const made = upload();
    this.uploads.set(key, made);
    made.catch(() => this.uploads.delete(key));
    return made;
  }
}
