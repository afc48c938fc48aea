import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderLeases } from '../../../src/storage/folder-lease.js';
import { FolderLedger } from '../../../src/storage/ledger/folder-ledger.js';
import { heldLock, type LedgerEntry, type LockGuard, withOrderLock } from '../../../src/storage/ledger/model.js';
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

describe('heldLock: the order lock a guard stands for', () => {
  it('is the lease withOrderLock took, given its guard, in its work and what that work awaits, and no longer', async () => {
    const dir = await tempDirPerTest('htorder-held-lock-');
    const mine = leases();
    const lock = join(dir, 'PO-1.json.lock');
    expect(heldLock(mine, lock, null)).toBeUndefined();
    let kept!: LockGuard;
    const seen = await withOrderLock(mine, lock, key, wait, async (guard) => {
      kept = guard;
      const held = heldLock(mine, lock, guard);
      expect(held?.guard).toBe(guard);
      expect(held?.lease.lost()).toBeUndefined();
      expect(held?.seen).toBeUndefined();
      held!.seen = 'etag-1';
      // Later in the same work, after other awaits: the same holder, with what it saw.
      await new Promise((resolve) => setTimeout(resolve, 5));
      return heldLock(mine, lock, guard)?.seen;
    });
    expect(seen).toBe('etag-1');
    // Let go: the guard stands for nothing, and a write under no lock is a write as anyone's.
    expect(() => heldLock(mine, lock, kept)).toThrow(/guard of a lock already let go/);
    expect(heldLock(mine, lock, null)).toBeUndefined();
  });

  it("is never another store's lock of the same name, nor another name's, and an inner lock hides no outer one", async () => {
    const dir = await tempDirPerTest('htorder-held-lock-');
    const [a, b] = [leases(), leases()];
    const order = join(dir, 'PO-1.json.lock');
    const account = join(dir, '.note.lock');
    await withOrderLock(a, order, key, wait, async (orderGuard) => {
      // Another instance (of one ledger, in one process) holding nothing here.
      expect(() => heldLock(b, order, orderGuard)).toThrow(/guard of another lock/);
      expect(heldLock(b, order, null)).toBeUndefined();
      await withOrderLock(a, account, { account: 'acc', orderNumber: '.note' }, wait, async (accountGuard) => {
        expect(heldLock(a, account, accountGuard)).toBeDefined();
        expect(heldLock(a, order, orderGuard)).toBeDefined();
        expect(heldLock(a, order, orderGuard)).not.toBe(heldLock(a, account, accountGuard));
        expect(() => heldLock(a, order, accountGuard)).toThrow(/guard of another lock/);
      });
      expect(heldLock(a, order, orderGuard)).toBeDefined();
    });
  });

  it('refuses a write under no lock (null) while this process holds the lock, and a guard no lock handed out', async () => {
    const dir = await tempDirPerTest('htorder-held-lock-');
    const mine = leases();
    const lock = join(dir, 'PO-1.json.lock');
    await withOrderLock(mine, lock, key, wait, async () => {
      expect(() => heldLock(mine, lock, null)).toThrow(/without the guard of .*which this process holds/);
      expect(() => heldLock(mine, lock, { assertHeld() {} })).toThrow(/a guard that no lock handed out/);
      // Another order of the same store: not held, so a write under no lock is as anyone's.
      expect(heldLock(mine, join(dir, 'PO-2.json.lock'), null)).toBeUndefined();
    });
  });

  it('names what is missing when a caller in plain JavaScript writes without options', async () => {
    const ledger = new FolderLedger(await tempDirPerTest('htorder-held-lock-'));
    const entry: LedgerEntry = {
      ledgerVersion: 1,
      account: 'acc',
      orderNumber: 'PO-1',
      payloadHash: 'h',
      state: 'submitted',
      attempts: 1,
      intentAt: '2026-11-30T00:00:00.000Z',
    };
    const untyped = ledger.write.bind(ledger) as (entry: LedgerEntry, options?: unknown) => Promise<void>;
    await expect(untyped(entry)).rejects.toThrow(/without \{ guard \}: pass the guard withLock gave, or null/);
    await expect(untyped(entry, {})).rejects.toThrow(TypeError);
    expect(await ledger.read(key)).toBeUndefined();
    await ledger.write(entry, { guard: null });
    expect((await ledger.read(key))?.state).toBe('submitted');
  });
});
