import { unlink } from 'node:fs/promises';

/** Removes a file; one that is already gone is fine (unlike rm --force, other errors still throw). */
export async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
