import { readFileSync, statSync } from 'node:fs';
import type { Settings } from '../core/config/resolve-settings.js';
import { UsageError } from '../core/errors.js';
import type { Logger } from '../core/log/logger.js';
import type { LeaseStore } from '../storage/lease.js';
import { FolderLedger } from '../storage/ledger/folder-ledger.js';
import type { LedgerStore } from '../storage/ledger/model.js';

/**
 * The ledger the settings name: the state dir's file ledger, or, with `ledgerUrl`, the
 * PostgreSQL database every host of a fleet shares (docs/fleet.md). The database's code (the
 * pg driver) is loaded only then. A setting that cannot be used is a UsageError (exit 2)
 * before anything is sent; a database that cannot be reached shows at the first statement
 * (exit 3).
 */
export interface OpenedLedger {
  ledger: LedgerStore;
  /** Where a watcher takes its claims when the ledger is a database: leases on its clock. */
  claims?: (leaseMs: number) => LeaseStore;
  /** For people: the database (`postgres://user@host:port/db`), or the state dir. */
  where: string;
}

export async function openLedger(
  session: { config: { stateDir: string }; settings: Pick<Settings, 'get' | 'raw'>; logger: Logger },
  opts: {
    /** A lock not renewed this long is a killed process's (lockStaleMs, or watch's lease). */
    staleMs: number;
    env: Record<string, string | undefined>;
    sandbox: boolean;
  },
): Promise<OpenedLedger> {
  const { settings, config, logger } = session;
  const url = settings.get('ledgerUrl');
  // The sandbox keeps its jobs under the state dir, and its orders must never reach a fleet's
  // ledger: under --sandbox a profile's ledgerUrl is set aside (said), the state dir's ledger used.
  if (url !== undefined && opts.sandbox)
    logger.warn(
      `--sandbox: ledgerUrl (${settings.raw('ledgerUrl')?.source ?? 'ledgerUrl'}) set aside; the sandbox's orders are kept in the state dir's ledger`,
    );
  if (url === undefined || opts.sandbox) {
    return { ledger: new FolderLedger(config.stateDir, { staleMs: opts.staleMs }), where: config.stateDir };
  }
  const { pgConnection } = await import('../storage/pg/pg-connection.js');
  const { PgDatabase } = await import('../storage/pg/pg-database.js');
  const { PgLedger } = await import('../storage/ledger/pg-ledger.js');
  const passwordFile = settings.get('ledgerPasswordFile');
  const connection = pgConnection({
    url,
    ...(passwordFile === undefined ? {} : { password: readPassword(passwordFile, logger) }),
    ...(settings.get('ledgerCaFile') === undefined ? {} : { caFile: settings.get('ledgerCaFile') }),
    allowInsecure: settings.get('allowInsecure') === true,
    env: opts.env,
  });
  const db = new PgDatabase({
    connection: connection.config,
    name: connection.name,
    waitMs: settings.get('ledgerWaitMs'),
    onWait: (why) => logger.warn(why),
  });
  const ledger = new PgLedger(db, { leaseMs: opts.staleMs });
  return { ledger, claims: (leaseMs) => ledger.claims(leaseMs), where: connection.name };
}

/** The password in ledgerPasswordFile: the file's text without surrounding whitespace; never shown. */
function readPassword(path: string, logger: Logger): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`ledgerPasswordFile: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const password = text.trim();
  if (password === '') throw new UsageError(`ledgerPasswordFile: ${path} is empty`);
  const mode = statSync(path, { throwIfNoEntry: false })?.mode;
  if (mode !== undefined && (mode & 0o004) !== 0)
    logger.warn(`password file ${path} (ledgerPasswordFile) can be read by other users (chmod go-r)`);
  return password;
}
