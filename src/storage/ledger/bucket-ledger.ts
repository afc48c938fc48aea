import { setTimeout as sleep } from 'node:timers/promises';
import { newOwnerId } from '../lease.js';
import { LeaseObject } from '../s3/lease-object.js';
import type { S3Store } from '../s3/s3-store.js';
import {
  type LedgerAccount,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type LockGuard,
  LockLostError,
  LockTimeoutError,
} from './model.js';
import { safeName } from './safe-name.js';

export interface BucketLedgerOptions {
  /** A lock not renewed for this long belongs to a dead instance and may be taken over. Default 30 s. */
  leaseMs?: number;
  /** How long to wait for another live holder before giving up. Default 120 s. */
  waitMs?: number;
  /** How often to look again while waiting. Default 200 ms. */
  pollMs?: number;
}

/**
 * The ledger of docs/architecture.md#exactly-once as objects in the watched bucket, so instances on different
 * machines share it: `<root><account>/<orderNumber>.json` per order, and beside it
 * `<orderNumber>.lock`, a lease object (see LeaseObject) created with `If-None-Match: *`,
 * renewed while held and released with `If-Match`. A PUT replaces an object atomically, so
 * readers never see a torn entry.
 */
export class BucketLedger implements LedgerStore {
  private readonly leaseMs: number;
  private readonly waitMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly store: S3Store,
    /** Key prefix, empty or ending in `/`, e.g. `drop/.htorder/ledger/`. */
    private readonly root: string,
    options: BucketLedgerOptions = {},
  ) {
    this.leaseMs = Math.max(1000, options.leaseMs ?? 30_000);
    this.waitMs = options.waitMs ?? 120_000;
    this.pollMs = options.pollMs ?? 200;
  }

  private base(key: { account: string; orderNumber: string }): string {
    return `${this.root}${safeName(key.account)}/${safeName(key.orderNumber)}`;
  }

  async withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    const lock = new LeaseObject(this.store, `${this.base(key)}.lock`, newOwnerId(), this.leaseMs);
    const deadline = Date.now() + this.waitMs;
    while (!(await lock.tryAcquire())) {
      if (Date.now() >= deadline) {
        throw new LockTimeoutError(`order ${JSON.stringify(key.orderNumber)} is locked by another htorder instance`);
      }
      await sleep(this.pollMs * (0.5 + Math.random()));
    }
    let lost: string | undefined;
    let lastRenewed = Date.now();
    const timer = setInterval(
      () => {
        lock.renew().then(
          (ok) => {
            if (ok) lastRenewed = Date.now();
            else lost ??= 'another instance took it over';
          },
          (err: unknown) => {
            // A failed renewal is not yet a loss; running past the lease without one is.
            if (Date.now() - lastRenewed > this.leaseMs) lost ??= `could not renew it (${(err as Error).message})`;
          },
        );
      },
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
    timer.unref();
    const guard: LockGuard = {
      assertHeld: () => {
        if (!lost && Date.now() - lastRenewed > this.leaseMs) lost = 'its lease ran out before it could be renewed';
        if (lost) throw new LockLostError(`lost the ledger lock of order ${JSON.stringify(key.orderNumber)}: ${lost}`);
      },
    };
    try {
      return await fn(guard);
    } finally {
      clearInterval(timer);
      if (!lost) await lock.release().catch(() => undefined);
    }
  }

  async read(key: LedgerKey): Promise<LedgerEntry | undefined> {
    const obj = await this.store.get(`${this.base(key)}.json`);
    return obj ? (JSON.parse(obj.body.toString('utf8')) as LedgerEntry) : undefined;
  }

  async write(entry: LedgerEntry): Promise<void> {
    await this.store.put(
      `${this.base(entry)}.json`,
      `${JSON.stringify(entry, null, 2)}\n`,
      undefined,
      'application/json',
    );
  }

  async readAccount(account: string): Promise<LedgerAccount | undefined> {
    const obj = await this.store.get(`${this.root}${safeName(account)}/.account`);
    return obj ? (JSON.parse(obj.body.toString('utf8')) as LedgerAccount) : undefined;
  }

  async writeAccount(record: LedgerAccount): Promise<void> {
    const key = `${this.root}${safeName(record.account)}/.account`;
    await this.store.put(key, `${JSON.stringify(record, null, 2)}\n`, undefined, 'application/json');
  }

  async *entries(account?: string): AsyncIterable<LedgerEntry> {
    const prefix = account === undefined ? this.root : `${this.root}${safeName(account)}/`;
    const objects = (await this.store.list(prefix))
      .filter((o) => o.key.endsWith('.json'))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    for (const o of objects) {
      const obj = await this.store.get(o.key);
      if (obj) yield JSON.parse(obj.body.toString('utf8')) as LedgerEntry;
    }
  }
}
