import type { PgDatabase } from '../pg/pg-database.js';
import { PgLeases } from '../pg/pg-lease.js';
import {
  type CompactPolicy,
  type CompactResult,
  heldLock,
  type LedgerAccount,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type LedgerWrite,
  type LockGuard,
  LockLostError,
  withOrderLock,
} from './model.js';
import { noteName } from './safe-name.js';

export interface PgLedgerOptions {
  /** A lock not renewed for this long belongs to a dead process and may be taken over. */
  leaseMs: number;
  /** How long to wait for another live holder before giving up. Default 120 s. */
  waitMs?: number;
}

/** The lease name of an order's lock. */
function orderLock(key: LedgerKey): string {
  return JSON.stringify(['order', key.account, key.orderNumber]);
}

/** Waiting for an order another host holds: its lock is held for one submission. */
const LOCK_BACKOFF = { baseMs: 25, maxMs: 500 };

/** Entries read per statement when all of them are listed. */
const PAGE = 500;

/** What `htorder ledger stats` shows of one account. */
export interface AccountStats {
  account: string;
  entries: number;
  /** intentAt of the oldest and newest entry (ISO 8601), undefined without entries. */
  oldest?: string;
  newest?: string;
  /** Bytes the account's entries and notes take in the database. */
  bytes: number;
}

/**
 * The ledger (docs/architecture.md#exactly-once) in PostgreSQL, shared by every host that names
 * the same database (`ledgerUrl`, docs/fleet.md): one row per account and order number, the
 * accounts' records and notes beside them, and the order locks as database leases
 * (pg-lease.ts). A statement commits before it returns — an intent is on the server's disk
 * before the POST it announces — and a note is updated in one transaction (updateNote), so the
 * day's budget is one row every host counts into.
 */
export class PgLedger implements LedgerStore {
  private readonly locks: PgLeases;

  constructor(
    private readonly db: PgDatabase,
    private readonly options: PgLedgerOptions,
  ) {
    this.locks = new PgLeases(db, { leaseMs: options.leaseMs, survivesHolder: true });
  }

  /** The database's leases, for the watchers' claims: judged by the same clock as the ledger's locks. */
  claims(leaseMs: number): PgLeases {
    return new PgLeases(this.db, { leaseMs });
  }

  async withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    const wait = { waitMs: this.options.waitMs ?? 120_000, backoff: LOCK_BACKOFF };
    return withOrderLock(this.locks, orderLock(key), key, wait, fn);
  }

  async withAccountLock<T>(account: string, name: string, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    const wait = { waitMs: this.options.waitMs ?? 120_000, backoff: LOCK_BACKOFF };
    const lock = JSON.stringify(['account', account, noteName(name)]);
    return withOrderLock(this.locks, lock, { account, orderNumber: name }, wait, fn);
  }

  /** The guard only checked for being the order's: a write under the lock checks the lease, not what was read. */
  async read(key: LedgerKey, options: { guard?: LockGuard } = {}): Promise<LedgerEntry | undefined> {
    if (options.guard) heldLock(this.locks, orderLock(key), options.guard);
    const { rows } = await this.db.query<{ entry: LedgerEntry }>(
      'SELECT entry FROM htorder.entries WHERE account = $1 AND order_number = $2',
      [key.account, key.orderNumber],
    );
    return rows[0]?.entry;
  }

  /**
   * Committed before it returns (the server's own durability: synchronous commit). Under the
   * order's lock (withLock's guard) the entry is written only if the lock's row is still ours, in the
   * same statement: a write held up past the lease (the database restarting while it is tried
   * again, a stalled network) arrives after another host took the order over, and must not set
   * back what that host recorded since (an outcome back to `intent`, or to `failed`, which
   * would allow a second create). It fails instead, as a lost lock does (LockLostError). The
   * row is read FOR SHARE, so a takeover waits for this statement, or this statement sees it.
   */
  async write(entry: LedgerEntry, options: LedgerWrite): Promise<void> {
    const held = heldLock(this.locks, orderLock(entry), options?.guard);
    const values = [entry.account, entry.orderNumber, entry.state, JSON.stringify(entry)];
    const upsert = `ON CONFLICT (account, order_number) DO UPDATE
         SET state = EXCLUDED.state, entry = EXCLUDED.entry, written_at = now()`;
    if (!held) {
      await this.db.query(
        `INSERT INTO htorder.entries (account, order_number, state, entry) VALUES ($1, $2, $3, $4) ${upsert}`,
        values,
      );
      return;
    }
    const { name, owner } = held.lease.row;
    const written = await this.db.query(
      `WITH lock AS (SELECT 1 FROM htorder.leases WHERE name = $5 AND owner = $6 FOR SHARE)
       INSERT INTO htorder.entries (account, order_number, state, entry)
       SELECT $1::text, $2::text, $3::text, $4::jsonb FROM lock ${upsert}`,
      [...values, name, owner],
    );
    if (written.rowCount !== 1)
      throw new LockLostError(
        `lost the ledger lock of order ${JSON.stringify(entry.orderNumber)} before its entry was written: another host holds it now`,
      );
  }

  async *entries(account?: string): AsyncIterable<LedgerEntry> {
    // Page by page in key order: a ledger of millions is never read into memory at once.
    let after: [string, string] = [account ?? '', ''];
    for (;;) {
      const { rows } = await this.db.query<{ account: string; order_number: string; entry: LedgerEntry }>(
        `SELECT account, order_number, entry FROM htorder.entries
         WHERE (account, order_number) > ($1, $2) ${account === undefined ? '' : 'AND account = $4'}
         ORDER BY account, order_number LIMIT $3`,
        account === undefined ? [...after, PAGE] : [...after, PAGE, account],
      );
      for (const row of rows) yield row.entry;
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) return;
      after = [last.account, last.order_number];
    }
  }

  async readAccount(account: string): Promise<LedgerAccount | undefined> {
    const { rows } = await this.db.query<{ record: LedgerAccount }>(
      'SELECT record FROM htorder.accounts WHERE account = $1',
      [account],
    );
    return rows[0]?.record;
  }

  async writeAccount(record: LedgerAccount): Promise<void> {
    await this.db.query(
      `INSERT INTO htorder.accounts (account, record) VALUES ($1, $2)
       ON CONFLICT (account) DO UPDATE SET record = EXCLUDED.record, written_at = now()`,
      [record.account, JSON.stringify(record)],
    );
  }

  async readNote<T>(account: string, name: string): Promise<T | undefined> {
    const { rows } = await this.db.query<{ value: T }>(
      'SELECT value FROM htorder.notes WHERE account = $1 AND name = $2',
      [account, noteName(name)],
    );
    return rows[0]?.value;
  }

  async writeNote(account: string, name: string, value: unknown): Promise<void> {
    await this.db.query(
      `INSERT INTO htorder.notes (account, name, value) VALUES ($1, $2, $3)
       ON CONFLICT (account, name) DO UPDATE SET value = EXCLUDED.value, written_at = now()`,
      [account, noteName(name), JSON.stringify(value)],
    );
  }

  async deleteNote(account: string, name: string): Promise<void> {
    await this.db.query('DELETE FROM htorder.notes WHERE account = $1 AND name = $2', [account, noteName(name)]);
  }

  /**
   * The database's ledger id (LedgerStore.ledgerId): made by the first host that asks, in one
   * statement that leaves an id already there alone, so every host reads the same one.
   */
  async ledgerId(): Promise<string> {
    await this.db.query(
      `INSERT INTO htorder.notes (account, name, value) VALUES ('', '.ledger-id', to_jsonb(gen_random_uuid()::text))
       ON CONFLICT (account, name) DO NOTHING`,
    );
    const { rows } = await this.db.query<{ value: string }>(
      "SELECT value FROM htorder.notes WHERE account = '' AND name = '.ledger-id'",
    );
    const id = rows[0]?.value;
    if (typeof id !== 'string') throw new Error("the ledger database's id could not be read");
    return id;
  }

  /**
   * The daily upkeep: removes the notes `policy.notes` say have expired (old content-index and
   * spend notes), each only if it still holds the value judged, so a note written again
   * meanwhile stays. Entries are kept whole (`foldBefore` is not applied): a row is small, and
   * an order's full record stays readable by every host and by `track`.
   */
  async compact(account: string, policy: CompactPolicy): Promise<CompactResult> {
    let removed = 0;
    for (const rule of policy.notes) {
      const { rows } = await this.db.query<{ name: string; value: unknown; text: string }>(
        'SELECT name, value, value::text AS text FROM htorder.notes WHERE account = $1 AND starts_with(name, $2)',
        [account, noteName(rule.prefix)],
      );
      for (const row of rows) {
        const at = rule.at(row.value);
        if (at === undefined || at >= rule.before) continue;
        const gone = await this.db.query(
          'DELETE FROM htorder.notes WHERE account = $1 AND name = $2 AND value::text = $3',
          [account, row.name, row.text],
        );
        removed += gone.rowCount ?? 0;
      }
    }
    return { folded: 0, notes: removed, moved: 0 };
  }

  async listNotes(account: string, prefix: string): Promise<string[]> {
    const { rows } = await this.db.query<{ name: string }>(
      'SELECT name FROM htorder.notes WHERE account = $1 AND starts_with(name, $2) ORDER BY name',
      [account, noteName(prefix)],
    );
    return rows.map((r) => r.name);
  }

  /**
   * In one transaction, under a transaction-scoped advisory lock on the note: every host's
   * update of it waits for the one before. Unlike an order's lock this one may vanish with
   * its connection: nothing irreversible is done under it, and a transaction cut short
   * writes nothing.
   */
  async updateNote<T>(
    account: string,
    name: string,
    change: (current: T | undefined) => Promise<T | undefined>,
  ): Promise<void> {
    const note = noteName(name);
    await this.db.transaction(async (q) => {
      await q.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [JSON.stringify([account, note])]);
      const { rows } = await q.query<{ value: T }>('SELECT value FROM htorder.notes WHERE account = $1 AND name = $2', [
        account,
        note,
      ]);
      const next = await change(rows[0]?.value);
      if (next === undefined) return;
      await q.query(
        `INSERT INTO htorder.notes (account, name, value) VALUES ($1, $2, $3)
         ON CONFLICT (account, name) DO UPDATE SET value = EXCLUDED.value, written_at = now()`,
        [account, note, JSON.stringify(next)],
      );
    });
  }

  /** Entries per account, the oldest and newest intent, and the bytes they take (`htorder ledger stats`). */
  async stats(): Promise<{ accounts: AccountStats[]; databaseBytes: number }> {
    const { rows } = await this.db.query<{
      account: string;
      entries: string;
      oldest: string | null;
      newest: string | null;
      bytes: string;
    }>(
      `SELECT a.account, coalesce(e.entries, 0) AS entries, e.oldest, e.newest,
              coalesce(e.bytes, 0) + coalesce(n.bytes, 0) AS bytes
       FROM (SELECT account FROM htorder.entries UNION SELECT account FROM htorder.notes WHERE account <> '') a
       LEFT JOIN (SELECT account, count(*) AS entries, min(entry->>'intentAt') AS oldest,
                         max(entry->>'intentAt') AS newest, sum(pg_column_size(entry)) AS bytes
                  FROM htorder.entries GROUP BY account) e ON e.account = a.account
       LEFT JOIN (SELECT account, sum(pg_column_size(value)) AS bytes FROM htorder.notes GROUP BY account) n
              ON n.account = a.account
       ORDER BY a.account`,
    );
    const size = await this.db.query<{ bytes: string }>(
      `SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c
       JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'htorder' AND c.relkind = 'r'`,
    );
    return {
      accounts: rows.map((r) => ({
        account: r.account,
        entries: Number(r.entries),
        ...(r.oldest === null ? {} : { oldest: r.oldest }),
        ...(r.newest === null ? {} : { newest: r.newest }),
        bytes: Number(r.bytes),
      })),
      databaseBytes: Number(size.rows[0]?.bytes ?? 0),
    };
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
