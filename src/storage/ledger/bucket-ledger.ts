import { BucketLeases } from '../bucket-lease.js';
import type { S3Store } from '../s3/s3-store.js';
import {
  type LedgerAccount,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type LockGuard,
  withOrderLock,
} from './model.js';
import { safeName } from './safe-name.js';

export interface BucketLedgerOptions {
  /** A lock not renewed for this long belongs to a dead instance and may be taken over. Default 30 s. */
  leaseMs?: number;
  /** How long to wait for another live holder before giving up. Default 120 s. */
  waitMs?: number;
  /** The first wait before looking again while another holds it (then the backoff doubles it). Default 200 ms. */
  pollMs?: number;
}

/**
 * The ledger of docs/architecture.md#exactly-once as objects in the watched bucket, so instances on different
 * machines share it: `<root><account>/<orderNumber>.json` per order, and beside it
 * `<orderNumber>.lock`, a bucket lease (bucket-lease.ts) created with `If-None-Match: *`,
 * renewed while held and released with `If-Match`. A PUT replaces an object atomically, so
 * readers never see a torn entry.
 */
export class BucketLedger implements LedgerStore {
  private readonly locks: BucketLeases;
  private readonly waitMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly store: S3Store,
    /** Key prefix, empty or ending in `/`, e.g. `drop/.htorder/ledger/`. */
    private readonly root: string,
    options: BucketLedgerOptions = {},
  ) {
    this.locks = new BucketLeases(store, Math.max(1000, options.leaseMs ?? 30_000), { survivesHolder: true });
    this.waitMs = options.waitMs ?? 120_000;
    this.pollMs = options.pollMs ?? 200;
  }

  private base(key: { account: string; orderNumber: string }): string {
    return `${this.root}${safeName(key.account)}/${safeName(key.orderNumber)}`;
  }

  async withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    // Each look is a request: the waits grow to ten times the first.
    const wait = { waitMs: this.waitMs, backoff: { baseMs: this.pollMs, maxMs: 10 * this.pollMs } };
    return withOrderLock(this.locks, `${this.base(key)}.lock`, key, wait, fn);
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
