/**
 * A workbook's zip archive read through its central directory (the table of contents at the end
 * of the file), never front to back: the sizes it declares refuse a workbook that would unpack to
 * gigabytes (a zip bomb, or just a huge export) before a byte is unpacked, and each part is then
 * opened at its own offset, in the order the reader needs, whatever order the writer stored it
 * in. Declared sizes are what honest writers and classic bombs state; a part that unpacks past
 * its declared size is stopped while it streams.
 */
import { createReadStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { createInflateRaw } from 'node:zlib';

const EOCD_SIGNATURE = 0x06054b50;
const ENTRY_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
/** End-of-central-directory record (22 bytes) plus the longest comment a zip may carry. */
const EOCD_SEARCH_BYTES = 22 + 0xffff;
const MAX_DIRECTORY_BYTES = 16 * 1024 * 1024;
const STORED = 0;
const DEFLATED = 8;

/** One part of the archive, as the central directory declares it. */
export interface ZipEntry {
  name: string;
  flags: number;
  method: number;
  compressedBytes: number;
  unpackedBytes: number;
  localHeaderOffset: number;
}

export interface ZipDirectory {
  entries: Map<string, ZipEntry>;
  /** Total declared unpacked bytes of every entry; infinite for Zip64 (past 4 GB, unreadable here). */
  unpackedBytes: number;
}

/**
 * An open archive: its directory, and its parts streamed through the one file handle (one open
 * per workbook, whatever the number of parts read). Close it when done.
 */
export class ZipArchive {
  private constructor(
    private readonly handle: FileHandle,
    /** The file's size in bytes, when opened. */
    readonly size: number,
    readonly directory: ZipDirectory | undefined,
  ) {}

  static async open(file: string): Promise<ZipArchive> {
    const handle = await open(file, 'r');
    try {
      const size = (await handle.stat()).size;
      return new ZipArchive(handle, size, await directoryOf(handle, size));
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /**
   * The unpacked bytes of one part, streamed from its own offset: memory stays one chunk, and the
   * stream fails when the part unpacks to more or fewer bytes than the directory declares for it.
   * Errors say "the part": the reader names it, with the sheet and row it was at.
   */
  async openEntry(entry: ZipEntry): Promise<Readable> {
    if (entry.flags & 0x1) throw new Error('the part is encrypted');
    if (entry.method !== STORED && entry.method !== DEFLATED) {
      throw new Error(`the part is packed with method ${entry.method}, not stored or deflated`);
    }
    const header = Buffer.alloc(30);
    const { bytesRead } = await this.handle.read(header, 0, 30, entry.localHeaderOffset);
    if (bytesRead < 30 || header.readUInt32LE(0) !== LOCAL_SIGNATURE) {
      throw new Error('the part is not where the zip directory says it is');
    }
    // The local header's own name and extra field lengths (they may differ from the directory's).
    const start = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    if (start + entry.compressedBytes > this.size) throw new Error('the part runs past the end of the file');
    const capped = new UnpackedSizeCap(entry.unpackedBytes);
    if (entry.compressedBytes === 0) return Readable.from([]).pipe(capped);
    // Positioned reads on the shared handle, which stays open until close().
    const end = start + entry.compressedBytes - 1;
    const raw = createReadStream('', { fd: this.handle, autoClose: false, start, end });
    const stages = entry.method === DEFLATED ? [raw, createInflateRaw(), capped] : [raw, capped];
    // pipeline destroys every stage with the first error, so the reader of `capped` sees it.
    return pipeline(stages, () => {}) as Transform;
  }

  /**
   * Every byte of the file, front to back, from the same open file as the parts (so a hash of
   * it is of the file the parts were read from, even if another is renamed over its name).
   */
  wholeFile(): Readable {
    return createReadStream('', { fd: this.handle, autoClose: false, start: 0 });
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

async function directoryOf(handle: FileHandle, size: number): Promise<ZipDirectory | undefined> {
  const tailLength = Math.min(size, EOCD_SEARCH_BYTES);
  const tail = Buffer.alloc(tailLength);
  await handle.read(tail, 0, tailLength, size - tailLength);
  let eocd = -1;
  for (let i = tailLength - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return undefined;
  const directoryBytes = tail.readUInt32LE(eocd + 12);
  const directoryOffset = tail.readUInt32LE(eocd + 16);
  const huge: ZipDirectory = { entries: new Map(), unpackedBytes: Number.POSITIVE_INFINITY };
  // Zip64 (a directory past 4 GB, or too big to be a workbook's): unknowable here, so "huge".
  if (directoryOffset === 0xffffffff || directoryBytes > MAX_DIRECTORY_BYTES) return huge;
  if (directoryOffset + directoryBytes > size) return undefined;
  const directory = Buffer.alloc(directoryBytes);
  await handle.read(directory, 0, directoryBytes, directoryOffset);
  const entries = new Map<string, ZipEntry>();
  let total = 0;
  for (let p = 0; p + 46 <= directory.length && directory.readUInt32LE(p) === ENTRY_SIGNATURE; ) {
    const nameLength = directory.readUInt16LE(p + 28);
    const entry: ZipEntry = {
      flags: directory.readUInt16LE(p + 8),
      method: directory.readUInt16LE(p + 10),
      compressedBytes: directory.readUInt32LE(p + 20),
      unpackedBytes: directory.readUInt32LE(p + 24),
      localHeaderOffset: directory.readUInt32LE(p + 42),
      name: directory.toString('utf8', p + 46, Math.min(p + 46 + nameLength, directory.length)),
    };
    if (entry.unpackedBytes === 0xffffffff || entry.compressedBytes === 0xffffffff) return huge;
    total += entry.unpackedBytes;
    entries.set(entry.name, entry);
    p += 46 + nameLength + directory.readUInt16LE(p + 30) + directory.readUInt16LE(p + 32);
  }
  return { entries, unpackedBytes: total };
}

/** Passes a part's unpacked bytes on while they are within its declared size, and checks they reach it. */
class UnpackedSizeCap extends Transform {
  private seen = 0;
  constructor(private readonly declared: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.declared)
      done(new Error(`the part unpacks past the ${this.declared} bytes its zip directory declares`));
    else done(null, chunk);
  }
  override _flush(done: TransformCallback): void {
    if (this.seen === this.declared) done();
    else done(new Error(`the part unpacks to ${this.seen} bytes, not the ${this.declared} its zip directory declares`));
  }
}
