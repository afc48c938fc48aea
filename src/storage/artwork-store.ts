import { createHash } from 'node:crypto';
import { closeSync, createReadStream, readSync } from 'node:fs';
import { extname } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { FolderFileError, openFileInFolder } from './folder-file.js';
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

/** A file of the manifest's folder, hashed: what it would be stored as. */
export interface ArtworkFile {
  /** As the manifest names it. */
  name: string;
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

  constructor(private readonly opts: ArtworkStoreOptions) {
    this.s3 = new S3Store(opts);
  }

  /** Where it is: `s3://bucket/prefix` (messages). */
  get location(): string {
    return `s3://${this.opts.bucket}/${this.opts.prefix}`;
  }

  /** Reads and hashes `name` inside `folder` (never through a link, never outside it). */
  describe(folder: string, name: string): ArtworkFile {
    const contentType = artworkContentType(name);
    if (!contentType)
      throw new FolderFileError(`is not a file type the printer takes (${Object.keys(TYPES).join(', ')})`);
    const { fd, size } = openFileInFolder(folder, name, MAX_ARTWORK_BYTES, "the manifest's folder");
    try {
      const hash = createHash('sha256');
      const chunk = Buffer.alloc(1024 * 1024);
      for (let at = 0; ; ) {
        const n = readSync(fd, chunk, 0, chunk.length, at);
        if (n === 0) break;
        hash.update(chunk.subarray(0, n));
        at += n;
      }
      const sha256 = hash.digest('hex');
      return { name, sha256, size, contentType, key: `${this.opts.prefix}${sha256}${extname(name).toLowerCase()}` };
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Puts the file in the store unless an object is at its key already; true when it uploaded.
   * The bytes are read again through the same checks and must still hash to `file.sha256`.
   */
  async upload(folder: string, file: ArtworkFile): Promise<boolean> {
    if (await this.s3.exists(file.key)) return false;
    const { fd, size } = openFileInFolder(folder, file.name, MAX_ARTWORK_BYTES, "the manifest's folder");
    const hash = createHash('sha256');
    const stream = createReadStream('', { fd, start: 0, end: Math.max(0, size - 1), autoClose: true });
    stream.on('data', (c) => hash.update(c));
    if (size !== file.size) {
      stream.destroy();
      throw new FolderFileError('changed while it was uploaded');
    }
    const etag = await this.s3.put(file.key, stream, { ifNoneMatch: '*' }, file.contentType, size);
    if (hash.digest('hex') !== file.sha256) {
      // The object's key promises bytes it does not hold: take it back.
      if (etag !== PRECONDITION_FAILED) await this.s3.delete(file.key, etag).catch(() => undefined);
      throw new FolderFileError('changed while it was uploaded');
    }
    if (etag !== PRECONDITION_FAILED) this.uploads++;
    return etag !== PRECONDITION_FAILED;
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
