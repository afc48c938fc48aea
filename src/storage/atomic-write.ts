import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

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
}

export interface AtomicWriteOptions extends NewFileOptions {
  /**
   * fsync the data before the rename (default true), so the new content survives a power
   * cut, not only a process crash. Callers that can recover a lost write by other means
   * may skip it: the rename alone is still atomic.
   */
  durable?: boolean;
}

/**
 * A temporary name beside `path` (same folder, so the rename never crosses a file system):
 * hidden, and unique to this process and write (`.NAME.PID.XXXXXXXX.tmp`).
 */
export function temporaryName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * A new temporary file beside `path` for an atomic write: exclusive create (O_EXCL, so a name
 * planted in a shared folder is never followed) under a random name (`path` itself when
 * `staged`), with `options` applied.
 */
export async function openTemporary(
  path: string,
  options: NewFileOptions = {},
): Promise<{ tmp: string; handle: FileHandle }> {
  const tmp = options.staged ? path : temporaryName(path);
  const handle = await open(tmp, 'wx', options.mode ?? 0o666);
  try {
    // The create's mode is cut by the umask: set it again only when the umask took something away.
    if (options.mode !== undefined && (options.mode & processUmask()) !== 0) await handle.chmod(options.mode);
    if (options.gid !== undefined) await handle.chown(-1, options.gid).catch(() => undefined);
  } catch (err) {
    await handle.close();
    await rm(tmp, { force: true });
    throw err;
  }
  return { tmp, handle };
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

/**
 * Writes `data` to `path` atomically: a temp file in the same directory (so the rename
 * never crosses a file system), fsync, then rename over the target. A reader sees the old
 * file or the new one, never a torn one; a crash leaves at most a stray `.tmp` file.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const { tmp, handle } = await openTemporary(path, options);
  let ok = false;
  try {
    await handle.writeFile(data);
    if (options.durable !== false) await handle.sync();
    ok = true;
  } finally {
    await handle.close();
    if (!ok) await rm(tmp, { force: true });
  }
  if (options.staged) return;
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
