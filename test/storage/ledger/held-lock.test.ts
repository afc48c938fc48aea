import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderLeases } from '../../../src/storage/folder-lease.js';
import { heldLock, withOrderLock } from '../../../src/storage/ledger/model.js';
import { tempDirPerTest } from '../../support/temp-files.js';

const wait = { waitMs: 1000, backoff: { baseMs: 10, maxMs: 50 } };
const key = { account: 'acc', orderNumber: 'PO-1' };

const opened: FolderLeases[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

function leases(): FolderLeases {
  const s = new FolderLeases({ owner: `owner-${opened.length}`, leaseMs: 30_000 });
  opened.push(s);
  return s;
}

describe('heldLock: the order lock the code running now holds', () => {
  it('is the lease withOrderLock took, inside its work and what that work awaits, and nowhere else', async () => {
    const dir = await tempDirPerTest('htorder-held-lock-');
    const mine = leases();
    const lock = join(dir, 'PO-1.json.lock');
    expect(heldLock(mine, lock)).toBeUndefined();
    const seen = await withOrderLock(mine, lock, key, wait, async (guard) => {
      const held = heldLock(mine, lock);
      expect(held?.guard).toBe(guard);
      expect(held?.lease.lost()).toBeUndefined();
      expect(held?.seen).toBeUndefined();
      held!.seen = 'etag-1';
      // Later in the same work, after other awaits: the same holder, with what it saw.
      await new Promise((resolve) => setTimeout(resolve, 5));
      return heldLock(mine, lock)?.seen;
    });
    expect(seen).toBe('etag-1');
    expect(heldLock(mine, lock)).toBeUndefined();
  });

  it("is never another store's lock of the same name, nor another name's, and an inner lock hides no outer one", async () => {
    const dir = await tempDirPerTest('htorder-held-lock-');
    const [a, b] = [leases(), leases()];
    const order = join(dir, 'PO-1.json.lock');
    const account = join(dir, '.note.lock');
    await withOrderLock(a, order, key, wait, async () => {
      // Another instance (of one ledger, in one process) holding nothing here.
      expect(heldLock(b, order)).toBeUndefined();
      await withOrderLock(a, account, { account: 'acc', orderNumber: '.note' }, wait, async () => {
        expect(heldLock(a, account)).toBeDefined();
        expect(heldLock(a, order)).toBeDefined();
        expect(heldLock(a, order)).not.toBe(heldLock(a, account));
      });
      expect(heldLock(a, account)).toBeUndefined();
    });
  });
});
