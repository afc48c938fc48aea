import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { backoffDelay } from '../../core/backoff.js';
import { StoreUnavailableError } from '../../core/errors.js';
import { migrate } from './migrations.js';

/**
 * One PostgreSQL database as htorder uses it (the ledger, docs/fleet.md): a pool of
 * connections, the schema brought up to date once before the first statement, and every
 * statement waiting — bounded by `waitMs` — while the database is unreachable (restarting,
 * failing over, the network down). Past the wait a StoreUnavailableError says so: exit 3, or a
 * retry for `watch`, never a guess.
 */

export interface PgDatabaseOptions {
  /** node-postgres connection settings (pg-connection.ts): host, port, user, database, password, ssl. */
  connection: pg.ClientConfig;
  /** For messages: `postgres://user@host:port/db`, never with a password. */
  name: string;
  /** How long a statement waits for the database to come back before giving up. */
  waitMs: number;
  /** Connections in the pool. */
  poolSize?: number;
  /** Told once per outage, when a statement first waits for the database. */
  onWait?: (why: string) => void;
}

/** What a statement runs on: the pool, or the one connection of a transaction. */
export type Queryable = Pick<pg.PoolClient, 'query'>;

/** The waits between tries while the database is away: the one backoff. */
const RECONNECT = { baseMs: 200, maxMs: 5000 };

export class PgDatabase {
  /** Single statements. */
  private readonly pool: pg.Pool;
  /**
   * Transactions, apart: a transaction waiting for another's lock holds its connection, and
   * the one it waits for may need a statement meanwhile (the day's budget reads approvals):
   * from one pool, enough waiting transactions would leave it none.
   */
  private readonly transactions: pg.Pool;
  private migrated: Promise<void> | undefined;
  /** Whether the current outage was told (onWait); reset by a statement that succeeds. */
  private waiting = false;

  constructor(private readonly opts: PgDatabaseOptions) {
    const size = opts.poolSize ?? 10;
    this.pool = PgDatabase.pool(opts.connection, size);
    this.transactions = PgDatabase.pool(opts.connection, Math.max(2, Math.ceil(size / 2)));
  }

  private static pool(connection: pg.ClientConfig, max: number): pg.Pool {
    const pool = new pg.Pool({
      ...connection,
      max,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 10_000,
      keepAlive: true,
      // A statement whose answer never comes (a network that drops packets silently) fails
      // and is tried again, instead of holding its order for ever.
      query_timeout: 60_000,
    });
    // An idle connection the server closed (a restart) is reported here, not thrown: the next
    // statement gets a new one.
    pool.on('error', () => undefined);
    // A connection can fail between the pool handing it out and its user listening for its
    // errors: a restarting server's "ready" and "terminating connection" arrive together, and
    // the second is told before `await pool.connect()` resumes. Unheard, that error would end
    // the process; heard here, the connection is merely broken, its next statement fails as
    // "not queryable" and is tried again, and the pool drops it when it is given back.
    pool.on('connect', (client) => client.on('error', () => undefined));
    return pool;
  }

  get name(): string {
    return this.opts.name;
  }

  /** Runs one statement (its own transaction), waiting while the database is unreachable. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
    options: { wait?: boolean } = {},
  ): Promise<pg.QueryResult<R>> {
    await this.ready();
    return this.retrying(() => this.pool.query<R>(text, values), options.wait !== false);
  }

  /**
   * Runs `fn` in one transaction on one connection, committed when it returns. When the
   * connection is lost mid-way the transaction is rolled back by the server and `fn` runs
   * again on a new one: it must depend only on what it reads in the transaction.
   */
  async transaction<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    await this.ready();
    return this.retrying(() => this.once(fn), true);
  }

  private async once<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    const client = await this.transactions.connect();
    let failure: unknown;
    // The server going away while the transaction waits between statements is told to the
    // client as an event: without a listener it would end the process. The next statement
    // fails instead, and the transaction is tried again.
    const broken = (err: Error): void => {
      failure ??= err;
    };
    client.on('error', broken);
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      failure = err;
      if (!lostConnection(err)) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.removeListener('error', broken);
      // A connection that failed is not given back to the pool to be used again.
      client.release(failure !== undefined && lostConnection(failure));
    }
  }

  /** The schema, brought up to date once (migrations.ts); a failure is not kept: the next statement tries again. */
  private ready(): Promise<void> {
    if (!this.migrated) {
      const started = this.retrying(() => this.once((q) => migrate(q, this.opts.name)), true);
      this.migrated = started;
      started.catch(() => {
        if (this.migrated === started) this.migrated = undefined;
      });
    }
    return this.migrated;
  }

  private async retrying<T>(op: () => Promise<T>, wait: boolean): Promise<T> {
    const deadline = Date.now() + this.opts.waitMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await op();
        this.waiting = false;
        return out;
      } catch (err) {
        const refused = refusal(err);
        if (refused) throw new StoreUnavailableError(`the ledger database ${this.opts.name} ${refused}`);
        if (!lostConnection(err)) throw err;
        const left = deadline - Date.now();
        const why = describe(err);
        if (!wait || left <= 0) {
          const waited = wait ? ` (waited ${Math.round(this.opts.waitMs / 1000)} s; setting ledgerWaitMs)` : '';
          throw new StoreUnavailableError(`cannot reach the ledger database ${this.opts.name}${waited}: ${why}`);
        }
        if (!this.waiting) {
          this.waiting = true;
          this.opts.onWait?.(`the ledger database ${this.opts.name} cannot be reached (${why}); waiting for it`);
        }
        await sleep(Math.min(left, backoffDelay(attempt, RECONNECT)));
      }
    }
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.transactions.end()]).catch(() => undefined);
  }
}

/** SQLSTATEs of a database that is away for now (connection exceptions, shutting down, starting, full). */
const AWAY = /^(08...|57P0[1-3]|53300|40001|40P01)$/;
/** Socket errors of a server that cannot be reached for now. */
const SOCKET =
  /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENETDOWN|EAI_AGAIN|ENOTFOUND)$/;
/** node-postgres's own words for a connection that broke or never came. */
const BROKEN = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|ended/i;

/**
 * Whether `err` says the database (or the way to it) is away rather than the statement wrong:
 * such a statement is tried again. A serialization failure or a deadlock is tried again too.
 */
export function lostConnection(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return AWAY.test(code) || SOCKET.test(code);
  return err instanceof Error && BROKEN.test(err.message);
}

/** Why the database turned us away for good (credentials, no such database), or undefined. */
function refusal(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code;
  if (code === '28P01' || code === '28000') return `refused the credentials: ${describe(err)}`;
  if (code === '3D000') return `does not exist: ${describe(err)}`;
  if (code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || /certificate|self.signed|SSL|TLS/i.test(describe(err)))
    return `could not be reached over TLS: ${describe(err)} (settings ledgerCaFile, sslmode in ledgerUrl)`;
  return undefined;
}

function describe(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown };
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : String(err);
  return typeof e.code === 'string' && !message.includes(e.code) ? `${message} (${e.code})` : message;
}
