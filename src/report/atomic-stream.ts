import { rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type NewFileOptions, openTemporary } from '../storage/atomic-write.js';

/** Bytes gathered per write. */
const WRITE_BYTES = 1 << 20;
/** The buffer's size once output outgrows the first one: a batch plus a chunk's worth. */
const FULL_BYTES = WRITE_BYTES * 2;
/**
 * The buffer's first size. Most reports are a few kB (a one-order file's result.json and
 * result.csv): a 2 MB buffer for each made `watch` spend ~0.4 ms per input in old-generation
 * collections, which V8 starts when this much off-heap memory was allocated since the last.
 * Under half of Buffer.poolSize (8 kB), the first buffer is a slice of Node's shared pool,
 * not an allocation of its own.
 */
const FIRST_BYTES = (Buffer.poolSize >>> 1) - 1;
/**
 * The longest the thread encodes a report before it lets other events through. `run` rewrites
 * a big input's reports while the other jobs' API answers arrive: a rewrite of 1,000 jobs
 * encoded in one go (~100 ms on a 2-core machine) held every answer that came meanwhile, and
 * with 8 calls in flight that stalled 8 of them at once; `watch` does the same to the other
 * inputs under way. Checked between chunks (result.json's ~64 kB, result.csv's 200 rows), so a
 * big `check` yields a few hundred times a second, which costs it nothing measurable.
 */
const TURN_MS = 4;
/** How many text pieces of a synchronous source are encoded between looks at the clock. */
const PIECES_PER_LOOK = 1024;

/**
 * writeFileAtomic for output too big to hold as one string (result.csv of a million-row
 * input): chunks are written to a temp file in the target's directory in ~1 MB batches,
 * fsynced, then renamed over the target. Readers see the old file or the new one.
 * Chunks may be text or bytes (bytes are copied as they are, after any text before them; the
 * source may reuse a chunk's memory once the next chunk is asked for).
 * `file` sets the new file's mode and group (reports in a drop folder), or has `path` itself
 * written, for the caller to rename into place (`staged`).
 */
export async function writeAtomicStream(
  path: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  file: NewFileOptions = {},
): Promise<void> {
  const { tmp, handle } = await openTemporary(path, file);
  const out = new DoubleBuffer(handle);
  const turns = new Turns();
  let ok = false;
  try {
    if (Symbol.iterator in chunks) {
      // A synchronous source (result.json: ~500k pieces) is read synchronously, awaiting only
      // when a batch is full or the thread's turn is up; `for await` would cost a promise
      // round trip per piece.
      let pieces = 0;
      for (const chunk of chunks as Iterable<string | Uint8Array>) {
        if (typeof chunk !== 'string' || !out.put(chunk)) await out.add(chunk);
        if ((typeof chunk !== 'string' || ++pieces % PIECES_PER_LOOK === 0) && turns.up()) await turns.next();
      }
    } else {
      for await (const chunk of chunks) {
        await out.add(chunk);
        if (turns.up()) await turns.next();
      }
    }
    await out.end();
    await handle.sync();
    ok = true;
  } finally {
    // A write still in flight (the source threw) ends before the file is closed and removed.
    if (!ok) await out.settle();
    await handle.close();
    if (!ok) await rm(tmp, { force: true });
  }
  if (file.staged) return;
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Whether the thread has encoded for TURN_MS since it last let other events through. */
class Turns {
  private since = performance.now();

  up(): boolean {
    return performance.now() - this.since >= TURN_MS;
  }

  /** Lets the events that arrived meanwhile run (a macrotask turn, not just a microtask). */
  async next(): Promise<void> {
    await nextTurn();
    this.since = performance.now();
  }
}

/**
 * Output gathered into one buffer while the other is being written: the next batch is encoded
 * while the last one is on its way to the disk, instead of the thread waiting for each write
 * (result.json of a 300,000-row input left it idle ~200 ms that way). Text is encoded into the
 * two reused buffers: joining pieces into a big string, or handing strings to write() (a new
 * Buffer each time), makes objects that outlive young-generation collections: a 380 MB
 * result.json then grew the old generation by ~150 MB of garbage. A buffer is touched again
 * only after its write has ended.
 */
class DoubleBuffer {
  private buf: Buffer = Buffer.allocUnsafe(FIRST_BYTES);
  /** The other buffer, made at the first write that is not the last. */
  private spare: Buffer | undefined;
  private used = 0;
  /** The write in flight, if any. */
  private writing: Promise<void> | undefined;

  constructor(private readonly handle: FileHandle) {}

  /**
   * Encodes a piece of text that surely fits below the batch size; false when it may not (then
   * add() it). Synchronous: the common path of result.json's many small pieces.
   */
  put(text: string): boolean {
    // UTF-8: at most 3 bytes per UTF-16 code unit.
    if (this.used + text.length * 3 >= Math.min(WRITE_BYTES, this.buf.length)) return false;
    this.used += this.buf.write(text, this.used, 'utf8');
    return true;
  }

  async add(chunk: string | Uint8Array): Promise<void> {
    if (typeof chunk !== 'string') return this.addBytes(chunk);
    if (this.used + chunk.length * 3 > this.buf.length) {
      // A small buffer grows before anything is written, so big output is still written in
      // batches of about WRITE_BYTES; a piece bigger than a full buffer gets one of its size.
      if (this.used > 0 && this.buf.length >= FULL_BYTES) await this.flush(true);
      if (this.used + chunk.length * 3 > this.buf.length) this.grow(this.used + chunk.length * 3);
    }
    this.used += this.buf.write(chunk, this.used, 'utf8');
    if (this.used >= WRITE_BYTES) await this.flush(true);
  }

  /** Bytes are copied in (the source may reuse them), a buffer's worth at a time. */
  private async addBytes(bytes: Uint8Array): Promise<void> {
    for (let at = 0; at < bytes.length; ) {
      if (this.used === this.buf.length) {
        if (this.buf.length < FULL_BYTES) this.grow(Math.min(this.used + bytes.length - at, FULL_BYTES));
        else await this.flush(true);
      }
      const n = Math.min(bytes.length - at, this.buf.length - this.used);
      this.buf.set(bytes.subarray(at, at + n), this.used);
      this.used += n;
      at += n;
    }
    if (this.used >= WRITE_BYTES) await this.flush(true);
  }

  /** Writes what is gathered and waits for every write to end. */
  async end(): Promise<void> {
    if (this.used > 0) await this.flush(false);
    await this.writing;
    this.writing = undefined;
  }

  /** Waits for a write in flight, ignoring its failure (the caller is already failing). */
  async settle(): Promise<void> {
    await this.writing?.catch(() => undefined);
  }

  /**
   * Starts writing the gathered bytes once the previous write has ended, and carries on in the
   * other buffer (`more`: output continues, so the spare is made if there is none).
   */
  private async flush(more: boolean): Promise<void> {
    await this.writing;
    const full = this.buf;
    const length = this.used;
    this.writing = writeAll(this.handle, full, length);
    // Never left unobserved: a failure surfaces at the next flush or end(), or in settle().
    this.writing.catch(() => undefined);
    this.used = 0;
    if (!more) return;
    this.buf = this.spare ?? Buffer.allocUnsafe(Math.max(FULL_BYTES, full.length));
    this.spare = full;
  }

  /** A bigger buffer holding what is gathered so far (up to FULL_BYTES, or `need` if more). */
  private grow(need: number): void {
    const grown = Buffer.allocUnsafe(Math.max(need, Math.min(FULL_BYTES, this.buf.length * 4)));
    this.buf.copy(grown, 0, 0, this.used);
    this.buf = grown;
  }
}

async function writeAll(handle: FileHandle, buf: Buffer, length: number): Promise<void> {
  for (let at = 0; at < length; ) at += (await handle.write(buf, at, length - at)).bytesWritten;
}
