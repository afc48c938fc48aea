import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /**
   * fsync the data before the rename (default true), so the new content survives a power
   * cut, not only a process crash. Callers that can recover a lost write by other means
   * may skip it: the rename alone is still atomic.
   */
  durable?: boolean;
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
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(data);
    if (options.durable !== false) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
