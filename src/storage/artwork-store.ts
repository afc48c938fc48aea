import { createHash } from 'node:crypto';
import { closeSync, createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { pipeline, Transform } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { FolderFileError, type FolderPin, openFileInFolder } from './folder-file.js';
import { PRECONDITION_FAILED, S3Store, type S3StoreOptions } from './s3/s3-store.js';

/**
 * Where artwork named by a manifest (`artwork: designs/tiger.png`) is put for the printer to
 * fetch: an S3-compatible bucket and prefix, each file under the SHA-256 of its bytes, so a
 * re-run or the same file in another order uploads nothing again. The printer gets either a
 * public link (publicBaseUrl + key, where the store is public) or a presigned GET link that
 * lives until the job's due date plus a margin. SigV4 presigned links live at most 7 days, so
 * a due date further out needs the public base URL; `link` says so instead of sending a link
 * that dies first.
 */

/** SigV4's own limit on a presigned link's lifetime. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/** Artwork larger than this is refused: print files are large, but not this large. */
export const MAX_ARTWORK_BYTES = 512 * 1024 * 1024;

export interface ArtworkStoreOptions extends S3StoreOptions {
  /** Key prefix: empty or ending in `/`. */
  prefix: string;
  /** Links are `${publicBaseUrl}/${key}` instead of presigned, when set. */
  publicBaseUrl?: string;
}

/** Files hashed at most, remembered by identity (a long-running watcher sees new files every night). */
const REMEMBERED_HASHES = 10_000;

/** A file of the manifest's folder, hashed: what it would be stored as. */
export interface ArtworkFile {
  /** As the manifest names it. */
  name: string;
  /** Device, inode, size and times: the file's identity while it is unchanged (describe's memo key). */
  id: string;
  sha256: string;
  size: number;
  contentType: string;
  key: string;
}

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.pdf': 'application/pdf',
  '.ai': 'application/postscript',
  '.eps': 'application/postscript',
  '.ps': 'application/postscript',
};

export function artworkContentType(name: string): string | undefined {
  return TYPES[extname(name).toLowerCase()];
}

export class ArtworkStore {
  private readonly s3: S3Store;
  /** PUTs made by this store: what a re-run must not repeat. */
  uploads = 0;
  /** Files read and hashed (describe): one per file and identity, however many lines name it. */
  hashed = 0;
  /** Files hashed, by identity (describe). */
  private readonly hashes = new Map<string, Promise<string>>();

  constructor(private readonly opts: ArtworkStoreOptions) {
    this.s3 = new S3Store(opts);
  }

  /** Where it is: `s3://bucket/prefix` (messages). */
  get location(): string {
    return `s3://${this.opts.bucket}/${this.opts.prefix}`;
  }

  /**
   * Reads and hashes `name` inside `folder` (never through a link, never outside it). Each
   * file is read once per (device, inode, size, modification and change time) for as long as
   * the store lives, however many lines name it (npm run bench:artwork), streamed off the event loop; `admit` may
   * refuse it first, by its identity and size (an input's cap on artwork bytes).
   */
  async describe(
    folder: FolderPin,
    name: string,
    admit: (id: string, size: number) => string | undefined = () => undefined,
  ): Promise<ArtworkFile> {
    const contentType = artworkContentType(name);
    if (!contentType)
      throw new FolderFileError(`is not a file type the printer takes (${Object.keys(TYPES).join(', ')})`);
    const { fd, size, stats } = openFileInFolder(folder, name, MAX_ARTWORK_BYTES, "the manifest's folder");
    const id = `${stats.dev}:${stats.ino}:${size}:${stats.mtimeMs}:${stats.ctimeMs}`;
    let hashing = this.hashes.get(id);
    try {
      const refused = admit(id, size);
      if (refused) throw new FolderFileError(refused);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    if (hashing) closeSync(fd);
    else {
      const made = hashOpenFile(fd, size);
      this.hashed++;
      hashing = made;
      this.remember(id, made);
    }
    const sha256 = await hashing;
    return { name, id, sha256, size, contentType, key: `${this.opts.prefix}${sha256}${extname(name).toLowerCase()}` };
  }

  /** Keeps a file's hash by its identity (a failed read is forgotten, so it is read again). */
  private remember(id: string, hashing: Promise<string>): void {
    if (this.hashes.size >= REMEMBERED_HASHES) {
      const [oldest] = this.hashes.keys();
      if (oldest !== undefined) this.hashes.delete(oldest);
    }
    this.hashes.set(id, hashing);
    hashing.catch(() => {
      if (this.hashes.get(id) === hashing) this.hashes.delete(id);
    });
  }

  /**
   * Puts the file in the store unless an object is at its key already (found before the put,
   * or by its condition); true when it uploaded.
   * The bytes are read again through the same checks and must still hash to `file.sha256`.
   */
  async upload(folder: FolderPin, file: ArtworkFile): Promise<boolean> {
    if (await this.s3.exists(file.key)) return false;
    const { fd, size } = openFileInFolder(folder, file.name, MAX_ARTWORK_BYTES, "the manifest's folder");
    if (size !== file.size) {
      closeSync(fd);
      throw new FolderFileError('changed while it was uploaded');
    }
    const hash = createHash('sha256');
    const read = createReadStream('', { fd, start: 0, end: Math.max(0, size - 1), autoClose: true });
    // Hashed as the store reads it, never ahead: a body of 2 MiB or more is sent only once the
    // store answers `Expect: 100-continue`, and bytes read before then would be hashed, not sent.
    const body = pipeline(
      read,
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      }),
      () => undefined,
    );
    let etag: string;
    try {
      etag = await this.s3.put(file.key, body, { ifNoneMatch: '*' }, file.contentType, size);
    } finally {
      // A put that fails before reading the file to its end leaves it open, and nothing else
      // closes a raw descriptor (the garbage collector does not).
      body.destroy();
      read.destroy();
    }
    // Another upload holds these bytes under the name they hash to; the store may answer so
    // before reading this body, so its hash is of a part and says nothing.
    if (etag === PRECONDITION_FAILED) return false;
    if (hash.digest('hex') !== file.sha256) {
      // The object's key promises bytes it does not hold: take it back.
      await this.s3.delete(file.key, etag).catch(() => undefined);
      throw new FolderFileError('changed while it was uploaded');
    }
    this.uploads++;
    return true;
  }

  /**
   * The link the printer is sent for `file`, valid until `until` (the due date plus the
   * margin); an error text when a presigned link cannot live that long.
   */
  async link(file: ArtworkFile, until: Date, now: Date): Promise<{ url: string } | { error: string }> {
    if (this.opts.publicBaseUrl) return { url: `${this.opts.publicBaseUrl.replace(/\/+$/, '')}/${file.key}` };
    const seconds = Math.ceil((until.getTime() - now.getTime()) / 1000);
    if (seconds > MAX_PRESIGN_SECONDS)
      return {
        error:
          `needs a link valid until ${until.toISOString().slice(0, 10)}, but a presigned link lives at most 7 days: ` +
          'make the store readable and set artworkPublicBaseUrl, or order closer to the due date',
      };
    const command = new GetObjectCommand({ Bucket: this.opts.bucket, Key: file.key });
    return { url: await getSignedUrl(this.s3.client, command, { expiresIn: Math.max(seconds, 900) }) };
  }

  close(): void {
    this.s3.close();
  }
}

/** SHA-256 of the first `size` bytes of the open file `fd`, streamed; closes `fd`. */
async function hashOpenFile(fd: number, size: number): Promise<string> {
  const hash = createHash('sha256');
  if (size === 0) closeSync(fd);
  else
    for await (const chunk of createReadStream('', { fd, start: 0, end: size - 1, highWaterMark: 1024 * 1024 }))
      hash.update(chunk as Buffer);
  return hash.digest('hex');
}
