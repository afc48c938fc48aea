import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fchownSync, fsync, open as openFd, readFileSync, writeSync } from 'node:fs';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';

/** What a new file gets besides its bytes (reports in a drop folder: the input's group, never more readable than the input). */
export interface NewFileOptions {
  /** Permission bits, set on the temporary file before the rename, so no umask widens or narrows them. */
  mode?: number;
  /** Group, where the owner may set it (a failure is ignored: the file keeps the default group). */
  gid?: number;
  /**
   * Write `path` itself (created exclusively, fsynced) instead of a temporary file renamed over
   * it: `path` is then a temporary name of the caller's, which renames it into place later,
   * together with other files (watch: an input's reports, back to back, just before the input).
   */
  staged?: boolean;
  /**
   * fsync the data before the rename (default true), so the new content survives a power
   * cut, not only a process crash. Callers that can recover a lost write by other means
   * may skip it: the rename alone is still atomic.
   */
  durable?: boolean;
  /**
   * Write chunked content with this thread's own system calls, not on libuv's thread pool. For a
   * command with nothing else to do meanwhile (`check`): each chunk's trip to the pool and back
   * leaves the thread idle while the pool's thread waits for a core, which `npm run bench:check`
   * shows in wall time. A long-running process keeps the default, so a slow share never stalls
   * its event loop.
   */
  onThisThread?: boolean;
  /**
   * Called with the temporary file, written whole, right before it is renamed over `path`: what
   * it throws cancels the write (the temporary is removed, `path` left as it was).
   */
  beforeRename?: (tmp: string) => Promise<void>;
}

/** Random bytes of a temporary name, written as hex: unique to one write of one process. */
const UNIQUE_BYTES = 4;

/**
 * A temporary name beside `path` (same folder, so the rename never crosses a file system):
 * hidden, and unique to this process and write (`.NAME.PID.XXXXXXXX.tmp`). temporaryOf reads
 * one back.
 */
export function temporaryName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${uniqueHex()}.tmp`);
}

/**
 * Random bytes drawn for many names at once, each name's bytes used once: as unpredictable as a
 * draw per name (a name planted ahead in a shared folder cannot be guessed), without a call
 * into the system's generator per write, which costs a run's main thread as much as the write
 * of a ledger entry itself (`npm run bench -- --jobs 10000 --latency 5`).
 */
let drawn = Buffer.alloc(0);
let used = 0;

function uniqueHex(): string {
  if (used + UNIQUE_BYTES > drawn.length) {
    drawn = randomBytes(UNIQUE_BYTES * 256);
    used = 0;
  }
  used += UNIQUE_BYTES;
  return drawn.toString('hex', used - UNIQUE_BYTES, used);
}

/** temporaryName's form: the target's name, its writer's PID, the random part. */
const TEMPORARY = new RegExp(`^\\.(.+)\\.([1-9]\\d{0,9})\\.[0-9a-f]{${2 * UNIQUE_BYTES}}\\.tmp$`);

/**
 * The target's name and the writer's PID of a name temporaryName makes (`.NAME.PID.XXXXXXXX.tmp`),
 * or undefined for any other name. The ending is fixed, so NAME is read back whole, dots and all.
 */
export function temporaryOf(name: string): { target: string; pid: number } | undefined {
  const m = TEMPORARY.exec(name);
  return m ? { target: m[1], pid: Number(m[2]) } : undefined;
}

let umask: number | undefined;

/**
 * The process's umask, read once from /proc/self/status (process.umask() would set it to 0 for
 * a moment, racing with files created meanwhile); where that cannot be read, all bits (so a
 * mode is always set explicitly). htorder never changes its umask.
 */
function processUmask(): number {
  if (umask === undefined) {
    try {
      const m = /^Umask:\s*([0-7]+)$/m.exec(readFileSync('/proc/self/status', 'latin1'));
      umask = m ? Number.parseInt(m[1], 8) : 0o777;
    } catch {
      umask = 0o777;
    }
  }
  return umask;
}

/** What an atomic write writes: the whole content, or chunks of it for output too big to hold at once. */
export type FileContent = string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

/**
 * Writes `data` to `path` atomically: a temp file in the same directory, created exclusively
 * (O_EXCL, so a name planted in a shared folder is never followed) with `options` applied,
 * fsync when durable, then rename over the target. A reader sees the old file or the new one,
 * never a torn one; a failure (of the disk, or of the source of the chunks midway) leaves the
 * target as it was and no temp file; a crash leaves at most a stray `.tmp` file. Chunks are
 * written in order, each before the next is asked for (a source may reuse a chunk's memory);
 * text pieces are gathered into writes of about BATCH_BYTES.
 */
export async function writeFileAtomic(path: string, data: FileContent, options: NewFileOptions = {}): Promise<void> {
  const tmp = options.staged ? path : temporaryName(path);
  if (isSmall(data)) await writeSmall(tmp, data, options);
  else await writeChunks(tmp, data, options);
  if (options.staged) return;
  try {
    await options.beforeRename?.(tmp);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Whole content up to this size is written and the file closed with this thread's own system
 * calls (writeSmall); the create, fsync and rename stay on libuv's pool. On a local disk a write
 * this small only copies into the page cache and a close of a new file flushes nothing, both
 * cheaper than the trip to the pool and back each would cost: a ledger writes two or three such
 * files an order (`npm run bench -- --jobs 10000 --latency 5`, the create phase's wall time). On
 * a network share the close sends the data, as this thread's reads of the ledger already wait
 * for the share (folder-ledger.ts).
 */
const SMALL_BYTES = 1 << 16;

const openAsync = promisify(openFd);
/** fsync of a file descriptor, on libuv's pool. */
export const fsyncAsync = promisify(fsync);

function isSmall(data: FileContent): data is string | Uint8Array {
  if (typeof data === 'string') return data.length <= SMALL_BYTES / 3;
  return data instanceof Uint8Array && data.byteLength <= SMALL_BYTES;
}

/** The temporary of whole, small content: as writeChunks, its write and close on this thread. */
async function writeSmall(tmp: string, data: string | Uint8Array, options: NewFileOptions): Promise<void> {
  const fd = await openAsync(tmp, 'wx', options.mode ?? 0o666);
  let ok = false;
  try {
    if (options.mode !== undefined && modeCut(options.mode)) fchmodSync(fd, options.mode);
    if (options.gid !== undefined) chownQuietly(fd, options.gid);
    writeWhole(fd, data);
    if (options.durable !== false) await fsyncAsync(fd);
    ok = true;
  } finally {
    closeSync(fd);
    if (!ok) await rm(tmp, { force: true });
  }
}

/**
 * Whether the umask cut `mode` at the create: only then is it set again, so a drop folder on a
 * share that refuses chmod still gets its reports.
 */
function modeCut(mode: number): boolean {
  return (mode & processUmask()) !== 0;
}

function chownQuietly(fd: number, gid: number): void {
  try {
    fchownSync(fd, -1, gid);
  } catch {
    // As writeChunks: the file keeps the default group.
  }
}

/** The temporary of any content, through a file handle: each step a trip through libuv's pool unless `onThisThread`. */
async function writeChunks(tmp: string, data: FileContent, options: NewFileOptions): Promise<void> {
  const handle = await open(tmp, 'wx', options.mode ?? 0o666);
  let ok = false;
  try {
    if (options.mode !== undefined && modeCut(options.mode)) await handle.chmod(options.mode);
    if (options.gid !== undefined) await handle.chown(-1, options.gid).catch(() => undefined);
    if (typeof data === 'string' || data instanceof Uint8Array) await writeFile(handle, data);
    else if (options.onThisThread) for await (const chunk of batched(data)) writeWhole(handle.fd, chunk);
    else await writeFile(handle, batched(data));
    if (options.durable !== false) await handle.sync();
    ok = true;
  } finally {
    await handle.close();
    if (!ok) await rm(tmp, { force: true });
  }
}

/** Writes all of `chunk` at the file's position, however many writes the system takes. */
export function writeWhole(fd: number, chunk: string | Uint8Array): void {
  const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** Text gathered per write: a report's many small pieces (errors.txt's lines) are not a write each. */
const BATCH_BYTES = 1 << 16;

async function* batched(chunks: Exclude<FileContent, string | Uint8Array>): AsyncIterable<string | Uint8Array> {
  let text = '';
  for await (const chunk of chunks) {
    if (typeof chunk === 'string') {
      text += chunk;
      if (text.length < BATCH_BYTES) continue;
      yield text;
    } else {
      if (text !== '') yield text;
      yield chunk;
    }
    text = '';
  }
  if (text !== '') yield text;
}
