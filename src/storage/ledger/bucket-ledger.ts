import { BucketLeases } from '../bucket-lease.js';
import { PRECONDITION_FAILED, type S3Store } from '../s3/s3-store.js';
import {
  heldLock,
  type LedgerAccount,
  type LedgerEntries,
  type LedgerEntry,
  LedgerEntryUnreadableError,
  type LedgerKey,
  type LedgerStore,
  type LedgerWrite,
  type LockGuard,
  LockLostError,
  type NoteUpdate,
  NoteUpdates,
  skipUnreadable,
  unreadableWhy,
  withOrderLock,
} from './model.js';
import { bucketLedgerId } from './ledger-id.js';
import { noteName, safeName } from './safe-name.js';

export interface BucketLedgerOptions {
  /** A lock not renewed for this long belongs to a dead instance and may be taken over. Default 30 s. */
  leaseMs?: number;
  /** How long to wait for another live holder before giving up. Default 120 s. */
  waitMs?: number;
  /** The first wait before looking again while another holds it (then the backoff doubles it). Default 200 ms. */
  pollMs?: number;
}

/**
 * The ledger (docs/architecture.md#exactly-once) as objects in the watched bucket, shared by
 * instances on different machines: `<root><account>/<orderNumber>.json` per order, locked by the
 * bucket lease `<orderNumber>.lock` beside it. A PUT replaces an object whole: no torn entry.
 */
export class BucketLedger implements LedgerStore {
  private readonly locks: BucketLeases;
  private readonly noteUpdates = new NoteUpdates(this);

  constructor(
    private readonly store: S3Store,
    /** Key prefix, empty or ending in `/`, e.g. `drop/.htorder/ledger/`. */
    private readonly root: string,
    private readonly options: BucketLedgerOptions = {},
  ) {
    this.locks = new BucketLeases(store, Math.max(1000, options.leaseMs ?? 30_000), { survivesHolder: true });
  }

  private base(key: { account: string; orderNumber: string }): string {
    return `${this.root}${safeName(key.account)}/${safeName(key.orderNumber)}`;
  }

  async withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    // Each look is a request: the waits grow to ten times the first.
    const pollMs = this.options.pollMs ?? 200;
    const wait = { waitMs: this.options.waitMs ?? 120_000, backoff: { baseMs: pollMs, maxMs: 10 * pollMs } };
    return withOrderLock(this.locks, `${this.base(key)}.lock`, key, wait, fn);
  }

  async read(key: LedgerKey, options: { guard?: LockGuard } = {}): Promise<LedgerEntry | undefined> {
    const held = options.guard && heldLock(this.locks, `${this.base(key)}.lock`, options.guard);
    const obj = await this.store.get(`${this.base(key)}.json`);
    // Under the order's lock its ETag is what the next write is conditional on.
    if (held) held.seen = obj ? obj.etag : null;
    return obj ? entryIn(`${this.base(key)}.json`, obj.body) : undefined;
  }

  /**
   * Under the order's lock (withLock's guard) the entry is written only if it is still as this holder
   * last saw or wrote it (If-Match its ETag, or If-None-Match when there was none): a PUT held
   * up past the lease (retries through an outage, a stalled network) arrives after another
   * host took the order over, and must not set back what that host recorded since (an outcome
   * back to `intent`, or to `failed`, which would allow a second create). It fails instead, as
   * a lost lock does (LockLostError). A store without conditional writes writes as before.
   */
  async write(entry: LedgerEntry, options: LedgerWrite): Promise<void> {
    const at = `${this.base(entry)}.json`;
    const text = jsonText(entry);
    const held = heldLock(this.locks, `${this.base(entry)}.lock`, options?.guard);
    if (!held) {
      await this.store.put(at, text, undefined, 'application/json');
      return;
    }
    if (held.seen === undefined) held.seen = (await this.store.get(at))?.etag ?? null;
    const condition = held.seen === null ? { ifNoneMatch: '*' as const } : { ifMatch: held.seen };
    const etag = await this.store.put(at, text, condition, 'application/json');
    if (etag !== PRECONDITION_FAILED) {
      held.seen = etag;
      return;
    }
    // Our own earlier attempt may have landed (its answer lost, the request sent again).
    const now = await this.store.get(at);
    if (now !== undefined && now.body.toString('utf8') === text) {
      held.seen = now.etag;
      return;
    }
    throw new LockLostError(
      `lost the ledger lock of order ${JSON.stringify(entry.orderNumber)} before its entry was written: another instance wrote it since`,
    );
  }

  async readAccount(account: string): Promise<LedgerAccount | undefined> {
    return this.getJson(`${this.root}${safeName(account)}/.account`);
  }

  async writeAccount(record: LedgerAccount): Promise<void> {
    await this.putJson(`${this.root}${safeName(record.account)}/.account`, record);
  }

  async readNote<T>(account: string, name: string): Promise<T | undefined> {
    return this.getJson(`${this.root}${safeName(account)}/${noteName(name)}`);
  }

  async writeNote(account: string, name: string, value: unknown): Promise<void> {
    await this.store.put(
      `${this.root}${safeName(account)}/${noteName(name)}`,
      jsonText(value),
      undefined,
      'application/json',
    );
  }

  async deleteNote(account: string, name: string): Promise<void> {
    await this.store.delete(`${this.root}${safeName(account)}/${noteName(name)}`);
  }

  async listNotes(account: string, prefix: string): Promise<string[]> {
    const dir = `${this.root}${safeName(account)}/`;
    const objects = await this.store.list(`${dir}${noteName(prefix)}`);
    return objects
      .map((o) => o.key.slice(dir.length))
      .filter((n) => !n.endsWith('.lock'))
      .sort();
  }

  updateNote<T>(
    account: string,
    name: string,
    change: (current: T | undefined) => Promise<T | undefined>,
    options?: NoteUpdate,
  ): Promise<void> {
    return this.noteUpdates.update(account, name, change, options);
  }

  async withAccountLock<T>(account: string, name: string, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    const pollMs = this.options.pollMs ?? 200;
    const wait = { waitMs: this.options.waitMs ?? 120_000, backoff: { baseMs: pollMs, maxMs: 10 * pollMs } };
    const lock = `${this.root}${safeName(account)}/${noteName(name)}.lock`;
    return withOrderLock(this.locks, lock, { account, orderNumber: name }, wait, fn);
  }

  /** Kept as `<root>.ledger-id` (hidden among the accounts, never an entry). */
  ledgerId(): Promise<string> {
    return bucketLedgerId(this.store, `${this.root}.ledger-id`);
  }

  async *entries(account?: string, options: LedgerEntries = {}): AsyncIterable<LedgerEntry> {
    const prefix = account === undefined ? this.root : `${this.root}${safeName(account)}/`;
    const objects = (await this.store.list(prefix))
      .filter((o) => o.key.endsWith('.json'))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    for (const o of objects) {
      const obj = await this.store.get(o.key);
      if (!obj) continue;
      try {
        yield entryIn(o.key, obj.body);
      } catch (err) {
        skipUnreadable(err, options);
      }
    }
  }

  private async getJson<T>(key: string): Promise<T | undefined> {
    const obj = await this.store.get(key);
    return obj ? (JSON.parse(obj.body.toString('utf8')) as T) : undefined;
  }

  private async putJson(key: string, value: LedgerEntry | LedgerAccount): Promise<void> {
    await this.store.put(key, jsonText(value), undefined, 'application/json');
  }
}

/** The entry an object at `key` holds; one that is not JSON is LedgerEntryUnreadableError, never "no entry". */
function entryIn(key: string, body: Buffer): LedgerEntry {
  try {
    return JSON.parse(body.toString('utf8')) as LedgerEntry;
  } catch (err) {
    throw new LedgerEntryUnreadableError(key, unreadableWhy(err), { cause: err });
  }
}

/** An object as the ledger keeps it: indented JSON and a newline (what `write` compares a refused PUT's object with). */
function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
