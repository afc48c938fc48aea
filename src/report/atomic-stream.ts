import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * writeFileAtomic for output too big to hold as one string (result.csv of a million-row
 * input): chunks are written to a temp file in the target's directory in ~1 MB batches,
 * fsynced, then renamed over the target. Readers see the old file or the new one.
 * Chunks may be text or bytes (bytes are written as they are, after any text before them).
 */
export async function writeAtomicStream(
  path: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(tmp, 'w');
  let ok = false;
  try {
    let pending: string[] = [];
    let size = 0;
    for await (const chunk of chunks) {
      if (typeof chunk !== 'string') {
        if (pending.length > 0) await handle.write(pending.join(''));
        pending = [];
        size = 0;
        for (let at = 0; at < chunk.length; ) at += (await handle.write(chunk, at, chunk.length - at)).bytesWritten;
        continue;
      }
      pending.push(chunk);
      size += chunk.length;
      if (size >= 1 << 20) {
        await handle.write(pending.join(''));
        pending = [];
        size = 0;
      }
    }
    if (pending.length > 0) await handle.write(pending.join(''));
    await handle.sync();
    ok = true;
  } finally {
    await handle.close();
    if (!ok) await rm(tmp, { force: true });
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
