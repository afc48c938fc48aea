import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { temporaryName, writeFileAtomic } from '../atomic-write.js';
import { linkRefused } from '../folder-lease.js';
import type { S3Store } from '../s3/s3-store.js';

/**
 * A ledger's identity (LedgerStore.ledgerId): a random id made by the first process that asks
 * and kept in the ledger itself, so every process sharing the ledger reads the same id and a
 * ledger elsewhere (another state dir, another host's) has another. Made exclusively: of two
 * processes asking at once, one writes it and both read that one.
 */

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The id in the file at `path` (a state dir's `ledger-id`), made there when there is none. */
export async function fileLedgerId(path: string): Promise<string> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = await readId(path);
    if (found !== undefined) return found;
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    // Written whole under a temporary name, then linked (no hard links: made exclusively).
    const text = `${randomUUID()}\n`;
    const tmp = temporaryName(path);
    await writeFileAtomic(tmp, text, { staged: true, mode: 0o644 });
    try {
      await link(tmp, path);
    } catch (err) {
      if (linkRefused(err)) await writeFileAtomic(path, text, { staged: true, mode: 0o644 }).catch(() => undefined);
      else if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await rm(tmp, { force: true });
    }
  }
  throw new Error(`cannot read or make the ledger's id in ${path}`);
}

async function readId(path: string): Promise<string | undefined> {
  let text: string;
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      text = await handle.readFile('latin1');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const id = text.trim();
  // Empty: being made without hard links (exclusively, then written); looked at again.
  if (id === '') return undefined;
  if (!ID.test(id))
    throw new Error(`${path} is not a ledger id written by htorder (remove it if nothing else wrote it)`);
  return id;
}

/** The id in the object at `key` of a bucket ledger, made there when there is none. */
export async function bucketLedgerId(store: S3Store, key: string): Promise<string> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = await store.get(key);
    if (found) {
      const id = found.body.toString('latin1').trim();
      if (!ID.test(id)) throw new Error(`s3://${store.bucket}/${key} is not a ledger id written by htorder`);
      return id;
    }
    await store.put(key, `${randomUUID()}\n`, { ifNoneMatch: '*' }, 'text/plain');
  }
  throw new Error(`cannot read or make the ledger's id at s3://${store.bucket}/${key}`);
}
