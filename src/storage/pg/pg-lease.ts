import { createHash } from 'node:crypto';
import { type ExpiryRule, HOST, isExpired, type Lease, type LeaseStore, newOwnerId } from '../lease.js';
import type { PgDatabase } from './pg-database.js';

/**
 * Leases in the database (lease.ts): one row of `htorder.leases` per held name, with its
 * holder's record. Taken by one statement — an insert, or an update of a row whose `until` has
 * passed — so of several hosts exactly one gets it; renewed and released only where the row is
 * still the holder's (its owner). Time is the DATABASE's: `until` is set from its `now()` and
 * judged against it, so the hosts' clocks, however far apart, never make a live holder look
 * dead. Its holder judges its own lease by elapsed time only (since it sent its last renewal
 * that succeeded), which no clock skew changes either.
 *
 * The ledger's order locks are such rows, not advisory locks: an advisory lock (or a row lock)
 * vanishes with its connection, so a holder killed right after sending `POST /Jobs` would free
 * the order at once, while its request may still reach the API; a second host would then
 * search, find nothing yet, and create the order again. A row lasts until its `until`, as
 * `survivesHolder` requires.
 */

export interface PgLeaseOptions {
  leaseMs: number;
  /** Leases outlive their holder's process until they run out (lease.ts ExpiryRule). */
  survivesHolder?: boolean;
  /** Tests: the time as this store sees it; the database's clock is shifted by its distance from the real one. */
  now?: () => number;
}

/** Names longer than this are stored by their hash: a primary key's entry has a size limit. */
const LONG_NAME = 512;

/** A lease of the database: its row, by which a statement can check that it is still the holder's. */
export interface PgLease extends Lease {
  /** The row's name as stored and the holder's owner id. */
  readonly row: { readonly name: string; readonly owner: string };
}

export class PgLeases implements LeaseStore<PgLease> {
  readonly leaseMs: number;
  /** The names of the leases held here: neither released nor found another's. */
  private readonly held = new Set<string>();

  constructor(
    private readonly db: PgDatabase,
    private readonly options: PgLeaseOptions,
  ) {
    this.leaseMs = options.leaseMs;
  }

  /** Milliseconds the database's `now()` is shifted by (tests only). */
  private shift(): number {
    return this.options.now ? this.options.now() - Date.now() : 0;
  }

  async tryAcquire(name: string): Promise<PgLease | undefined> {
    const key = storedName(name);
    // Ours still, however late its renewal: taking it over would make its holder lose it to us.
    if (this.held.has(key)) return undefined;
    const owner = newOwnerId();
    const sentAt = performance.now();
    // A row of our own owner is ours already: the insert of a try whose answer was lost.
    const taken = await this.db.query(
      `INSERT INTO htorder.leases AS l (name, owner, host, pid, until)
       VALUES ($1, $2, $3, $4, now() + ($5::float8 + $6::float8) * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE
         SET owner = EXCLUDED.owner, host = EXCLUDED.host, pid = EXCLUDED.pid, until = EXCLUDED.until
         WHERE l.until <= now() + $6::float8 * interval '1 millisecond' OR l.owner = EXCLUDED.owner
       RETURNING owner`,
      [key, owner, HOST, process.pid, this.leaseMs, this.shift()],
    );
    if (taken.rowCount === 1) return this.hold(key, owner, sentAt);
    return this.options.survivesHolder ? undefined : this.takeFromDead(key, owner);
  }

  /**
   * The lease of a holder whose process is gone from this host, taken over at once (a
   * restarted watcher resumes its own crashed work): the liveness part of the one rule; the
   * database already judged its time.
   */
  private async takeFromDead(key: string, owner: string): Promise<PgLease | undefined> {
    const { rows } = await this.db.query<{ owner: string; host: string; pid: number }>(
      'SELECT owner, host, pid FROM htorder.leases WHERE name = $1',
      [key],
    );
    const seen = rows[0];
    const rule: ExpiryRule = { survivesHolder: false };
    // Any real time is before the end of time: only the holder's liveness is judged here.
    if (!seen || !isExpired({ ...seen, until: '9999-12-31T23:59:59.999Z' }, Date.now(), rule)) return undefined;
    const sentAt = performance.now();
    const taken = await this.db.query(
      `UPDATE htorder.leases SET owner = $2, host = $3, pid = $4, until = now() + ($5::float8 + $6::float8) * interval '1 millisecond'
       WHERE name = $1 AND owner = $7`,
      [key, owner, HOST, process.pid, this.leaseMs, this.shift(), seen.owner],
    );
    return taken.rowCount === 1 ? this.hold(key, owner, sentAt) : undefined;
  }

  private hold(key: string, owner: string, sentAt: number): PgLease {
    const { db, leaseMs, held } = this;
    held.add(key);
    let why: string | undefined;
    let renewedAt = sentAt;
    let failure = '';
    let renewing: Promise<boolean> | undefined;
    const lose = (reason: string): false => {
      if (why === undefined) held.delete(key);
      why ??= reason;
      return false;
    };
    const renewOnce = async (): Promise<boolean> => {
      const sent = performance.now();
      try {
        // Not waited for: a database away cannot renew anything, and lost() tells when that matters.
        const done = await db.query(
          `UPDATE htorder.leases SET until = now() + ($3::float8 + $4::float8) * interval '1 millisecond' WHERE name = $1 AND owner = $2`,
          [key, owner, leaseMs, this.shift()],
          { wait: false },
        );
        if (done.rowCount !== 1) return lose('another instance took it over');
        renewedAt = sent;
        return true;
      } catch (err) {
        failure = ` (${(err as Error).message})`;
        throw err;
      }
    };
    return {
      row: { name: key, owner },
      lost() {
        // Without a request: a lease not renewed within its time may be another's by now.
        if (!why && performance.now() - renewedAt > leaseMs)
          lose(`its lease ran out before it could be renewed${failure}`);
        return why === undefined ? undefined : new Error(why);
      },
      renew() {
        if (why) return Promise.resolve(false);
        // One at a time: callers arriving while one is under way share it.
        renewing ??= renewOnce().finally(() => {
          renewing = undefined;
        });
        return renewing;
      },
      async release() {
        if (why) return;
        lose('released');
        await db.query('DELETE FROM htorder.leases WHERE name = $1 AND owner = $2', [key, owner], { wait: false });
      },
    };
  }
}

/** The name as stored: itself, or for a long one a readable start and its hash. */
function storedName(name: string): string {
  if (name.length <= LONG_NAME) return name;
  return `${name.slice(0, 64)}…${createHash('sha256').update(name, 'utf8').digest('hex')}`;
}
