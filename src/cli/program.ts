import { Command, CommanderError } from 'commander';
import { VERSION } from '../core/version.js';
import { ExitCode, UsageError } from '../core/errors.js';
import { examples } from './help.js';
import * as init from './commands/init.js';
import * as sandbox from './commands/sandbox.js';
import * as api from './commands/api.js';
import * as check from './commands/check.js';
import * as planAndRun from './commands/pipeline-command.js';
import * as apply from './commands/apply.js';
import * as approve from './commands/approve.js';
import * as ledger from './commands/ledger.js';
import * as track from './commands/track.js';
import * as demo from './commands/demo.js';
import * as watch from './commands/watch.js';
import * as ui from './commands/ui.js';
import { printableLines } from '../core/printable.js';

/**
 * Builds the `htorder` command tree. Each command lives in its own module under
 * ./commands and only parses arguments and prints; the work happens in the stages.
 * A command's action sets `process.exitCode` (exit codes: docs/commands.md#exit-codes).
 *
 * Command modules import only commander and small helpers at the top and load their
 * implementation with `await import()` in the action: `htorder --version`, `--help` and
 * `htorder sandbox` then start without compiling schemas or loading the HTTP client, the
 * AWS SDK and the metrics registry (test/cli/startup.test.ts keeps it that way).
 */
export function buildProgram(): Command {
  const program = new Command('htorder')
    .description('Turns YAML/CSV order manifests into heat-transfer print orders, exactly once.')
    .version(VERSION, '-V, --version')
    .showSuggestionAfterError(true)
    .exitOverride()
    .addHelpText(
      'after',
      examples([
        ['htorder init my-orders', 'a starter manifest, a CSV template and an ERP mapping skeleton'],
        ['htorder check my-orders/orders.yaml', 'offline check; reports next to the file'],
        [
          'htorder plan --sandbox my-orders/orders.yaml',
          'dry run against the built-in simulator: no credentials needed',
        ],
        ['htorder run orders.yaml', 'submit every job exactly once (configure HTORDER_* first)'],
        ['htorder <command> --help', 'options and examples of one command'],
      ]) +
        '\n\nExit codes: 0 ok, 1 invalid or refused (see the reports), 2 usage or configuration, 3 API unreachable (retry), 4 jobs wait for approval (htorder approve), 70 internal error (a bug: report it).\nDocumentation: README.md of the htorder package.',
    );
  // In the order `--help` lists them.
  for (const command of [init, check, planAndRun, apply, approve, track, watch, ledger, ui, api, sandbox, demo])
    command.register(program);
  return program;
}

/** Runs the CLI; returns the exit code instead of exiting, so tests can call it in-process. */
export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram();
  // Actions report their outcome through process.exitCode; start clean so an in-process
  // caller (tests, the demo) never inherits the code of an earlier command.
  process.exitCode = undefined;
  try {
    await program.parseAsync(argv, { from: 'user' });
    const code = typeof process.exitCode === 'number' ? process.exitCode : ExitCode.Ok;
    process.exitCode = undefined;
    return code;
  } catch (err) {
    process.exitCode = undefined;
    if (err instanceof CommanderError) {
      // --help and --version arrive here with exitCode 0; usage mistakes with 1 → we use 2.
      return err.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`htorder: ${printableLines(err.message)}\n`);
      return ExitCode.Usage;
    }
    throw err;
  }
}
