import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BucketLedger } from '../../../src/storage/ledger/bucket-ledger.js';
import type { LedgerEntry } from '../../../src/storage/ledger/model.js';
import { LockLostError } from '../../../src/storage/ledger/model.js';
import { safeName } from '../../../src/storage/ledger/safe-name.js';
import { BucketLeases } from '../../../src/storage/bucket-lease.js';
import { S3Store } from '../../../src/storage/s3/s3-store.js';
import { startHeldLink } from '../../support/held-link.js';
import { s3Fixture } from '../../support/s3.js';

const fx = s3Fixture();

const entry = (orderNumber: string, state: LedgerEntry['state'] = 'intent'): LedgerEntry => ({
  ledgerVersion: 1,
  account: 'http://api#1001',
  orderNumber,
  payloadHash: 'h',
  state,
  attempts: 1,
  intentAt: '2026-11-21T00:00:00.000Z',
});

describe('conditional-write probe', () => {
  it('finds that plain s3rver ignores If-None-Match, and the proxied one honours it', async () => {
    const raw = new S3Store({
      bucket: fx.s3.bucket,
      endpoint: fx.s3.rawEndpoint,
      forcePathStyle: true,
      credentials: fx.s3.credentials,
    });
    try {
      expect(await raw.probeConditionalWrites('probe/')).toEqual({
        ok: false,
        why: expect.stringContaining('overwrote'),
      });
    } finally {
      raw.close();
    }
    expect(await fx.store.probeConditionalWrites('probe/')).toEqual({ ok: true });
  });
});

describe('bucket leases', () => {
  it('lets exactly one of many racing claimants win (412 for the others)', async () => {
    const leases = new BucketLeases(fx.store, 30_000);
    const won = (await Promise.all(Array.from({ length: 8 }, () => leases.tryAcquire('race/x.claim')))).filter(
      (l) => l !== undefined,
    );
    expect(won).toHaveLength(1);
    await won[0]!.release();
    expect(await fx.store.get('race/x.claim')).toBeUndefined();
  });

  it('takes over an expired lease exactly once, and the old holder then finds it lost', async () => {
    const old = await new BucketLeases(fx.store, 1000).tryAcquire('race/y.claim');
    expect(old).toBeDefined();
    const leases = new BucketLeases(fx.store, 30_000);
    expect(await leases.tryAcquire('race/y.claim')).toBeUndefined(); // the old lease is still valid
    await sleep(1100);
    const won = (await Promise.all([leases.tryAcquire('race/y.claim'), leases.tryAcquire('race/y.claim')])).filter(
      (l) => l !== undefined,
    );
    expect(won).toHaveLength(1);
    expect(await old!.renew()).toBe(false);
    await old!.release(); // no-op: it no longer holds it, and must not delete the new holder's claim
    expect(await fx.store.get('race/y.claim')).toBeDefined();
  });
});

describe('BucketLedger', () => {
  it('writes, reads and lists entries per account', async () => {
    const ledger = new BucketLedger(fx.store, 'l1/');
    await ledger.write(entry('PO-1'), { guard: null });
    await ledger.write({ ...entry('PO/2 ..'), state: 'submitted', jobNumber: 7 }, { guard: null });
    expect(await ledger.read({ account: 'http://api#1001', orderNumber: 'PO/2 ..' })).toMatchObject({
      state: 'submitted',
      jobNumber: 7,
    });
    expect(await ledger.read({ account: 'http://api#1001', orderNumber: 'nope' })).toBeUndefined();
    const all: string[] = [];
    for await (const e of ledger.entries('http://api#1001')) all.push(e.orderNumber);
    expect(all.sort()).toEqual(['PO-1', 'PO/2 ..']);
    const other: string[] = [];
    for await (const e of ledger.entries('http://api#9999')) other.push(e.orderNumber);
    expect(other).toEqual([]);
  });

  it('an entry object that is not JSON is LedgerEntryUnreadableError naming its key; a listing told of it goes on', async () => {
    const ledger = new BucketLedger(fx.store, 'l-broken/');
    const account = 'http://api#1001';
    await ledger.write(entry('PO-1'), { guard: null });
    await ledger.write(entry('PO-2'), { guard: null });
    const key = `l-broken/${safeName(account)}/${safeName('PO-2')}.json`;
    await fx.store.put(key, '\0\0\0\0');
    await expect(ledger.read({ account, orderNumber: 'PO-2' })).rejects.toMatchObject({
      name: 'LedgerEntryUnreadableError',
      path: key,
      why: 'not JSON',
    });
    const listed: string[] = [];
    const told: string[] = [];
    for await (const e of ledger.entries(account, { unreadable: (err) => told.push(err.path) }))
      listed.push(e.orderNumber);
    expect(listed).toEqual(['PO-1']);
    expect(told).toEqual([key]);
  });

  it('never lets two holders of one order overlap (two ledgers = two machines)', async () => {
    const a = new BucketLedger(fx.store, 'l2/', { pollMs: 20 });
    const b = new BucketLedger(fx.store, 'l2/', { pollMs: 20 });
    const key = { account: 'acc', orderNumber: 'PO-9' };
    let inside = 0;
    let maxInside = 0;
    const work = (l: BucketLedger) =>
      l.withLock(key, async (guard) => {
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        await sleep(30);
        guard.assertHeld();
        inside -= 1;
      });
    await Promise.all([work(a), work(b), work(a), work(b)]);
    expect(maxInside).toBe(1);
  });

  it('takes over the lock of a crashed holder once its lease has run out', async () => {
    const key = { account: 'acc', orderNumber: 'PO-crash' };
    // Never released: the "process" died.
    expect(await new BucketLeases(fx.store, 1000).tryAcquire(`l3/${lockPath(key)}`)).toBeDefined();
    const ledger = new BucketLedger(fx.store, 'l3/', { pollMs: 50, waitMs: 5000 });
    const got = await ledger.withLock(key, async () => 'mine');
    expect(got).toBe('mine');
  });

  it('reports a lost lock through the guard instead of acting on it', async () => {
    const key = { account: 'acc', orderNumber: 'PO-lost' };
    const ledger = new BucketLedger(fx.store, 'l4/', { leaseMs: 1000 });
    await expect(
      ledger.withLock(key, async (guard) => {
        // Someone else overwrites the lock object (what a takeover does): renewals now fail.
        await fx.store.put(
          `l4/${lockPath(key)}`,
          '{"owner":"thief","host":"h","pid":1,"until":"2999-01-01T00:00:00Z"}\n',
        );
        await sleep(700);
        guard.assertHeld();
      }),
    ).rejects.toBeInstanceOf(LockLostError);
  });
});

describe('BucketLedger: a write under a lock that another host has taken over since', () => {
  const acc = 'http://api#1001';

  it.each(['intent', 'failed'] as const)(
    'refuses an entry (%s) when another host wrote the order since this holder saw it',
    async (state) => {
      const a = new BucketLedger(fx.store, 'f1/');
      const b = new BucketLedger(fx.store, 'f1/');
      const orderNumber = `PO-${state}`;
      await expect(
        a.withLock({ account: acc, orderNumber }, async (guard) => {
          expect(await a.read({ account: acc, orderNumber }, { guard })).toBeUndefined();
          // Meanwhile (this holder stalled past its lease) another host created the order.
          await b.write({ ...entry(orderNumber, 'submitted'), jobNumber: 42 }, { guard: null });
          await a.write(entry(orderNumber, state), { guard });
        }),
      ).rejects.toBeInstanceOf(LockLostError);
      expect(await b.read({ account: acc, orderNumber })).toMatchObject({ state: 'submitted', jobNumber: 42 });
    },
  );

  it('refuses a write given no guard while this instance holds the order, or the guard of another order', async () => {
    const a = new BucketLedger(fx.store, 'f4/');
    const key = { account: acc, orderNumber: 'PO-guard' };
    await a.write(entry('PO-guard', 'failed'), { guard: null });
    await a.withLock(key, async (guard) => {
      await a.read(key, { guard });
      await expect(a.write(entry('PO-guard'), { guard: null })).rejects.toThrow(/without the guard/);
      await expect(a.write(entry('PO-other'), { guard })).rejects.toThrow(/the guard of another lock/);
    });
    expect(await a.read(key)).toMatchObject({ state: 'failed' });
    expect(await a.read({ account: acc, orderNumber: 'PO-other' })).toBeUndefined();
  });

  it('writes an order again and again under its lock, and takes its own write that landed unanswered', async () => {
    const a = new BucketLedger(fx.store, 'f2/');
    const key = { account: acc, orderNumber: 'PO-own' };
    await a.withLock(key, async (guard) => {
      await a.write(entry('PO-own'), { guard });
      // The next write's first attempt landed, but its answer was lost: the write is sent again.
      const again = { ...entry('PO-own', 'submitted'), jobNumber: 5 };
      await fx.store.put(`f2/${safeName(acc)}/${safeName('PO-own')}.json`, `${JSON.stringify(again, null, 2)}\n`);
      await a.write(again, { guard });
      await a.write({ ...again, attempts: 2 }, { guard });
    });
    expect(await a.read(key)).toMatchObject({ state: 'submitted', jobNumber: 5, attempts: 2 });
  });

  it('refuses a write held up in the network until another host took the order over and recorded it', async () => {
    // Host A's bytes to the store are held back (its lease renewals too) until its lease has run
    // out, host B has taken the order over and recorded it submitted; then A's intent arrives.
    const link = await startHeldLink(Number(new URL(fx.s3.endpoint).port));
    const slow = new S3Store({
      bucket: fx.s3.bucket,
      endpoint: `http://127.0.0.1:${link.port}`,
      forcePathStyle: true,
      credentials: fx.s3.credentials,
    });
    try {
      const a = new BucketLedger(slow, 'f3/', { leaseMs: 1000 });
      const b = new BucketLedger(fx.store, 'f3/', { leaseMs: 1000, pollMs: 50, waitMs: 10_000 });
      const key = { account: acc, orderNumber: 'PO-late' };
      let takenOver!: Promise<void>;
      const late = a.withLock(key, async (guard) => {
        await a.read(key, { guard });
        link.hold();
        takenOver = b.withLock(key, async (taken) => {
          await b.write({ ...entry('PO-late', 'submitted'), jobNumber: 9 }, { guard: taken });
          link.release();
        });
        await a.write(entry('PO-late'), { guard });
      });
      await expect(late).rejects.toBeInstanceOf(LockLostError);
      await takenOver;
      expect(await b.read(key)).toMatchObject({ state: 'submitted', jobNumber: 9 });
    } finally {
      link.release();
      slow.close();
      await link.close();
    }
  }, 30_000);
});

function lockPath(key: { account: string; orderNumber: string }): string {
  // Mirrors BucketLedger's layout through the same safeName, without reaching into privates.
  return `${safeName(key.account)}/${safeName(key.orderNumber)}.lock`;
}
