import { StoreUnavailableError } from '../../core/errors.js';
import type { Queryable } from './pg-database.js';

/**
 * The ledger's schema in the database, as numbered steps: each applied once, in order, in the
 * transaction that records it in `htorder.migrations`. Steps are only ever added: a database
 * holds the history of every htorder that used it.
 *
 * Texts are compared byte-wise (COLLATE "C"): names and order numbers sort the same on every
 * server, whatever its locale, as they do in a file ledger.
 */
export const MIGRATIONS: readonly { description: string; sql: string }[] = [
  {
    description: 'entries, accounts, notes and leases',
    sql: `
      CREATE TABLE htorder.entries (
        account text COLLATE "C" NOT NULL,
        order_number text COLLATE "C" NOT NULL,
        state text NOT NULL,
        entry jsonb NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account, order_number)
      );
      CREATE TABLE htorder.accounts (
        account text COLLATE "C" PRIMARY KEY,
        record jsonb NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE htorder.notes (
        account text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        value jsonb NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account, name)
      );
      CREATE TABLE htorder.leases (
        name text COLLATE "C" PRIMARY KEY,
        owner text NOT NULL,
        host text NOT NULL,
        pid integer NOT NULL,
        until timestamptz NOT NULL
      );`,
  },
];

/**
 * One number for the advisory lock every host takes around its migrations ('htorder' in
 * ASCII): several hosts starting at once apply each step once, one after the other, instead
 * of racing to create the same tables. Held for the transaction only; nothing else uses it.
 */
const MIGRATION_LOCK = '29401419587282290';

/** Brings the schema up to date, inside the caller's transaction. */
export async function migrate(q: Queryable, name: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
  await q.query('CREATE SCHEMA IF NOT EXISTS htorder');
  await q.query(
    `CREATE TABLE IF NOT EXISTS htorder.migrations (
       version integer PRIMARY KEY,
       description text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`,
  );
  const { rows } = await q.query<{ version: number | null }>('SELECT max(version) AS version FROM htorder.migrations');
  const current = rows[0]?.version ?? 0;
  if (current > MIGRATIONS.length) {
    throw new StoreUnavailableError(
      `the ledger database ${name} was brought to schema ${current} by a newer htorder; this one knows schema ${MIGRATIONS.length}: upgrade htorder on this host`,
    );
  }
  for (const [i, step] of MIGRATIONS.entries()) {
    if (i + 1 <= current) continue;
    await q.query(step.sql);
    await q.query('INSERT INTO htorder.migrations (version, description) VALUES ($1, $2)', [i + 1, step.description]);
  }
}
