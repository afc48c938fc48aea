import { rename, rm } from 'node:fs/promises';
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
 * writeFileAtomic for output too big to hold as one string (result.csv of a million-row
 * input): chunks are written to a temp file in the target's directory in ~1 MB batches,
 * fsynced, then renamed over the target. Readers see the old file or the new one.
 * Chunks may be text or bytes (bytes are written as they are, after any text before them).
 * `file` sets the new file's mode and group (reports in a drop folder), or has `path` itself
 * written, for the caller to rename into place (`staged`).
 */
export async function writeAtomicStream(
  path: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  file: NewFileOptions = {},
): Promise<void> {
  const { tmp, handle } = await openTemporary(path, file);
  let ok = false;
  try {
    // Text is encoded into ONE reused buffer and written from it. Joining pieces into a big
    // string, or handing strings to write() (a new Buffer each time), makes objects that
    // outlive young-generation collections: a 380 MB result.json then grew the old
    // generation by ~150 MB of garbage. Reuse is safe: every write is awaited before the
    // buffer is touched again.
    let buf = Buffer.allocUnsafe(FIRST_BYTES);
    let used = 0;
    /** A bigger buffer holding what is gathered so far (up to FULL_BYTES, or `need` if more). */
    const grow = (need: number): void => {
      const grown = Buffer.allocUnsafe(Math.max(need, Math.min(FULL_BYTES, buf.length * 4)));
      buf.copy(grown, 0, 0, used);
      buf = grown;
    };
    const flush = async (): Promise<void> => {
      for (let at = 0; at < used; ) at += (await handle.write(buf, at, used - at)).bytesWritten;
      used = 0;
    };
    const writeBytes = async (bytes: Uint8Array): Promise<void> => {
      if (used > 0) await flush();
      for (let at = 0; at < bytes.length; ) at += (await handle.write(bytes, at, bytes.length - at)).bytesWritten;
    };
    /** Whether `length` UTF-16 code units surely fit in the buffer. */
    const room = (length: number): boolean => used + length * 3 <= buf.length; // UTF-8: ≤ 3 bytes per code unit
    const add = async (chunk: string | Uint8Array): Promise<void> => {
      if (typeof chunk !== 'string') return writeBytes(chunk);
      if (!room(chunk.length)) {
        // A small buffer grows before anything is written, so big output is still written in
        // batches of about WRITE_BYTES.
        if (used > 0 && buf.length >= FULL_BYTES) await flush();
        if (!room(chunk.length)) grow(used + chunk.length * 3);
      }
      used += buf.write(chunk, used, 'utf8');
      if (used >= WRITE_BYTES) await flush();
    };
    if (Symbol.iterator in chunks) {
      // A synchronous source (result.json: ~500k pieces) is read synchronously, awaiting only
      // real writes; `for await` would cost a promise round trip per piece.
      for (const chunk of chunks as Iterable<string | Uint8Array>) {
        if (typeof chunk === 'string' && room(chunk.length) && used + chunk.length * 3 < WRITE_BYTES)
          used += buf.write(chunk, used, 'utf8');
        else await add(chunk);
      }
    } else {
      for await (const chunk of chunks) await add(chunk);
    }
    if (used > 0) await flush();
    await handle.sync();
    ok = true;
  } finally {
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
