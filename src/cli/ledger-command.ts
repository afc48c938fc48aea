import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { entryStats, importLedger } from '../app/ledger-admin.js';
import { openLedger } from '../app/ledger-store.js';
import { defaultStateDir } from '../core/config/api-config.js';
import type { ConfigFlags } from '../core/config/resolve-config.js';
import { resolveSettings } from '../core/config/resolve-settings.js';
import { storeUnavailable } from '../api/errors.js';
import { ExitCode, UsageError } from '../core/errors.js';
import { createLogger, isLogLevel } from '../core/log/logger.js';
import { printable, printableLines } from '../core/printable.js';
import { FolderLedger } from '../storage/ledger/folder-ledger.js';
import type { OnUnreadable } from '../storage/ledger/model.js';
import { PgLedger } from '../storage/ledger/pg-ledger.js';
import type { CommandIo } from './command-io.js';

/**
 * `htorder ledger import|stats`: the ledger without the API (no account is needed to move or
 * count entries). Exit 0 done, 2 for usage (no ledgerUrl to import into), 3 when the database
 * cannot be reached.
 */

async function open(flags: ConfigFlags, io: CommandIo) {
  const settings = resolveSettings({ env: io.env, flags, cwd: io.cwd });
  const level = settings.get('logLevel');
  const logger = createLogger({
    level: level !== undefined && isLogLevel(level) ? level : undefined,
    destination: io.stderr,
  });
  for (const warning of settings.warnings) logger.warn(warning);
  const stateDir = settings.get('stateDir') ?? defaultStateDir(settings.env, settings.home);
  const opened = await openLedger(
    { config: { stateDir }, settings, logger },
    { staleMs: settings.get('lockStaleMs'), env: io.env, sandbox: false },
  );
  return { ...opened, stateDir, settings };
}

export async function runLedgerImport(
  input: { from?: string; json: boolean; flags: ConfigFlags },
  io: CommandIo,
): Promise<number> {
  const { ledger, where, stateDir, settings } = await open(input.flags, io);
  try {
    if (settings.get('ledgerUrl') === undefined)
      throw new UsageError(
        "ledger import copies a state dir's ledger into a database: set ledgerUrl (--ledger-url, HTORDER_LEDGER_URL or a profile)",
      );
    const from = resolve(io.cwd, input.from ?? stateDir);
    if (!existsSync(join(from, 'ledger'))) throw new UsageError(`${from} holds no ledger (no ledger/ folder)`);
    io.stderr.write(`htorder ledger import: ${printable(from)} → ${printable(where)}\n`);
    const result = await importLedger(new FolderLedger(from), ledger, {
      progress: (n) => {
        if (n % 1000 === 0) io.stderr.write(`  ${n} entries\n`);
      },
      unreadable: unreadableTold(
        'import',
        io,
        'not copied: the database searches the account for its order before the first create',
      ),
    });
    io.stderr.write(
      `htorder ledger import: ${result.copied} entries copied, ${result.kept} already there (same or later), ` +
        `${result.notes} notes copied, ${result.accounts} accounts. Until a run on the database checks an account, ` +
        'each order it has not seen is searched once before its first create.\n',
    );
    if (input.json) io.stdout.write(`${JSON.stringify({ command: 'ledger import', from, to: where, ...result })}\n`);
    return ExitCode.Ok;
  } catch (err) {
    return unavailable(err, 'import', io);
  } finally {
    await ledger.close?.();
  }
}

export async function runLedgerStats(input: { json: boolean; flags: ConfigFlags }, io: CommandIo): Promise<number> {
  const { ledger, where } = await open(input.flags, io);
  try {
    const { accounts, bytes } =
      ledger instanceof PgLedger
        ? await ledger.stats().then((s) => ({ accounts: s.accounts, bytes: s.databaseBytes }))
        : await entryStats(ledger, unreadableTold('stats', io, 'not counted')).then((a) => ({
            accounts: a,
            bytes: a.reduce((n, s) => n + s.bytes, 0),
          }));
    if (input.json) {
      io.stdout.write(`${JSON.stringify({ command: 'ledger stats', ledger: where, bytes, accounts })}\n`);
      return ExitCode.Ok;
    }
    const entries = accounts.reduce((n, a) => n + a.entries, 0);
    const lines = [
      `ledger ${where}: ${accounts.length} account(s), ${entries} entries, ${sizeText(bytes)}`,
      ...accounts.map(
        (a) =>
          `  ${a.account}  ${a.entries} entries  oldest ${a.oldest ?? '-'}  newest ${a.newest ?? '-'}  ${sizeText(a.bytes)}`,
      ),
    ];
    io.stdout.write(printableLines(`${lines.join('\n')}\n`));
    return ExitCode.Ok;
  } catch (err) {
    return unavailable(err, 'stats', io);
  } finally {
    await ledger.close?.();
  }
}

/**
 * An entry that cannot be read, named on stderr with what became of it; the command goes on
 * (htorder run fails that entry's order and says how to repair it).
 */
function unreadableTold(what: string, io: CommandIo, fate: string): OnUnreadable {
  return (err) => io.stderr.write(`htorder ledger ${what}: ${printable(err.message)}: ${fate}\n`);
}

function unavailable(err: unknown, what: string, io: CommandIo): number {
  const why = storeUnavailable(err);
  if (why === undefined) throw err;
  io.stderr.write(`htorder ledger ${what}: ${printable(why)}\n`);
  return ExitCode.Unavailable;
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}
