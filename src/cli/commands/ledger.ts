import type { Command } from 'commander';
import { addSettingOptions, configFlagsFrom } from '../../core/config/config-flags.js';
import { processIo } from '../command-io.js';
import { examples } from '../help.js';

/** The ledger's own settings, and where a config file and profile come from: all `ledger` needs (no API account). */
const LEDGER_FLAGS = [
  'profile',
  'config',
  'stateDir',
  'ledgerUrl',
  'ledgerPasswordFile',
  'ledgerCaFile',
  'ledgerWaitMs',
  'allowInsecure',
  'logLevel',
] as const;

/** `htorder ledger import [STATE_DIR]` and `htorder ledger stats` (docs/fleet.md). */
export function register(program: Command): void {
  const ledger = program
    .command('ledger')
    .description("move a state dir's ledger into the ledger database (ledgerUrl), or see what a ledger holds");
  ledger.addHelpText(
    'after',
    examples([
      ['htorder ledger import /srv/htorder-state', "copy a watcher's state dir into the database of ledgerUrl"],
      ['htorder ledger stats', 'entries per account, oldest and newest, size'],
    ]),
  );
  const importCmd = ledger
    .command('import')
    .description(
      "copy a state dir's ledger (orders, held jobs, approvals) into the database of ledgerUrl; safe to repeat",
    )
    .argument('[stateDir]', 'the state dir whose ledger to copy (default: the configured stateDir)')
    .option('--json', 'print a machine-readable summary to stdout');
  importCmd.addHelpText(
    'after',
    examples([
      [
        'htorder ledger import --ledger-url postgres://htorder@db.example.com/htorder',
        "this user's ledger into the database",
      ],
      ['htorder ledger import /srv/htorder-state', "a watcher's state dir"],
    ]),
  );
  addSettingOptions(importCmd, LEDGER_FLAGS);
  importCmd.action(async (stateDir: string | undefined, opts: Record<string, unknown>) => {
    const { runLedgerImport } = await import('../ledger-command.js');
    process.exitCode = await runLedgerImport(
      { ...(stateDir === undefined ? {} : { from: stateDir }), json: opts.json === true, flags: configFlagsFrom(opts) },
      processIo(),
    );
  });
  const stats = ledger
    .command('stats')
    .description('entries per account, the oldest and newest, and their size, of the configured ledger')
    .option('--json', 'print a machine-readable summary to stdout');
  addSettingOptions(stats, LEDGER_FLAGS);
  stats.action(async (opts: Record<string, unknown>) => {
    const { runLedgerStats } = await import('../ledger-command.js');
    process.exitCode = await runLedgerStats({ json: opts.json === true, flags: configFlagsFrom(opts) }, processIo());
  });
}
