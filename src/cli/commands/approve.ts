import { type Command, InvalidArgumentError } from 'commander';
import { addConfigOptions, addSettingOptions, configFlagsFrom } from '../../core/config/config-flags.js';
import { processIo } from '../command-io.js';
import { addSandboxOptions, examples, sandboxOptionsFrom } from '../help.js';

/** `--limit` and `--offset` must be whole numbers (their range is checked by runApprove). */
function wholeNumber(text: string): number {
  if (!/^\d{1,9}$/.test(text.trim())) throw new InvalidArgumentError('a whole number');
  return Number(text);
}

/** The default page of `--list` (approve-command.ts LIST_LIMIT; not imported, so help loads without it). */
const LIST_LIMIT = 100;

/** `htorder approve INPUT|REPORT… [--order N…] [--note TEXT]` and `htorder approve --list` (docs/guardrails.md). */
export function register(program: Command): void {
  const cmd = program
    .command('approve')
    .description('approve jobs that wait for approval (over a limit, suspected duplicates); the next run submits them')
    .argument(
      '[paths...]',
      "inputs whose waiting jobs to approve: a watcher's held/X, one of its reports (X.result.json …), or where it was dropped or run",
    )
    .option('--order <orderNumber...>', 'approve only these orders of the inputs')
    .option('--note <text>', 'why, recorded with the approval')
    .option('--list', 'show the jobs that wait for approval on the account, oldest first')
    .option('--limit <n>', `--list: show at most this many jobs (default ${LIST_LIMIT})`, wholeNumber)
    .option('--offset <n>', '--list: skip this many jobs first (the next page)', wholeNumber)
    .option(
      '--ledger <s3-url>',
      "a bucket watcher's ledger (its bucketLedger, s3://BUCKET/PREFIX/) instead of the state dir's (default: bucketLedger when set)",
    )
    .option('--json', 'print a machine-readable summary to stdout');
  addSandboxOptions(cmd).addHelpText(
    'after',
    examples([
      ['htorder approve --list', 'what waits on the account'],
      [
        'htorder approve orders.csv --note "big launch order, checked with Sam"',
        'approve the waiting jobs of an input',
      ],
      ['htorder approve /srv/orders/held/orders.csv', "the held input of a watcher (as the watcher's user)"],
      ['htorder approve held/orders.csv.result.json --order PO-1', 'one order of a held input'],
      ['htorder approve --list --offset 100', 'the next page of what waits'],
    ]),
  );
  addSettingOptions(cmd, ['s3Endpoint', 's3Region', 's3ForcePathStyle']);
  addConfigOptions(cmd);
  cmd.action(async (paths: string[], opts: Record<string, unknown>) => {
    const { runApprove } = await import('../approve-command.js');
    process.exitCode = await runApprove(
      {
        paths,
        orders: opts.order as string[] | undefined,
        note: opts.note as string | undefined,
        list: opts.list === true,
        ...(typeof opts.limit === 'number' ? { limit: opts.limit } : {}),
        ...(typeof opts.offset === 'number' ? { offset: opts.offset } : {}),
        ...(typeof opts.ledger === 'string' ? { ledger: opts.ledger } : {}),
        json: opts.json === true,
        ...sandboxOptionsFrom(opts),
        flags: configFlagsFrom(opts),
      },
      processIo(),
    );
  });
}
