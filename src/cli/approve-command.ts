import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { bucketLedgerOf, openBucketStore } from '../app/bucket-ledger.js';
import { openPipelineContext } from '../app/pipeline-context.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import { parseS3Url } from '../storage/s3/s3-url.js';
import type { ConfigFlags } from '../core/config/resolve-config.js';
import { ExitCode } from '../core/errors.js';
import { amountText } from '../core/money.js';
import { printable, printableLines } from '../core/printable.js';
import { approveInput, waiting } from '../pipeline/approve.js';
import type { ApprovalNote } from '../pipeline/guard-notes.js';
import type { CommandIo } from './command-io.js';
import type { SandboxOptions } from './help.js';

export interface ApproveInput extends Partial<SandboxOptions> {
  paths: string[];
  orders?: string[];
  note?: string;
  list?: boolean;
  json?: boolean;
  /** `s3://BUCKET/PREFIX/`: a bucket watcher's ledger (its bucketLedger), instead of the state dir's. */
  ledger?: string;
  flags: ConfigFlags;
}

const REPORT = '.result.json';

/**
 * `htorder approve`: the held jobs of each input (or report) approved in the ledger of the
 * configured account, or `--list`: what waits. Exit 0 when something was approved (or listed),
 * 1 when a path has no job waiting, 2 for usage, 3 when the account cannot be learnt.
 */
export async function runApprove(input: ApproveInput, io: CommandIo): Promise<number> {
  if (!input.list && input.paths.length === 0) {
    io.stderr.write('htorder approve: give inputs or reports to approve, or --list\n');
    return ExitCode.Usage;
  }
  const pipeline = await openPipelineContext({
    ...input,
    command: 'plan',
    env: io.env,
    cwd: io.cwd,
    stderr: io.stderr,
  });
  let store: { close(): void } | undefined;
  try {
    let account: string;
    try {
      account = (await pipeline.context()).account;
    } catch (err) {
      io.stderr.write(
        `htorder approve: cannot reach the API to learn the account: ${printable((err as Error).message)}\n`,
      );
      return ExitCode.Unavailable;
    }
    let ledger: LedgerStore = pipeline.ledger;
    const { settings } = pipeline.session;
    // A bucket watcher's ledger: --ledger, else the bucketLedger its recipe sets (unless the
    // ledger is a database, ledgerUrl: then a bucket watcher keeps it there too).
    const bucketLedger =
      input.ledger ?? (settings.get('ledgerUrl') === undefined ? settings.get('bucketLedger') : undefined);
    if (bucketLedger !== undefined) {
      const s3 = parseS3Url(bucketLedger);
      if ('error' in s3) {
        io.stderr.write(`htorder approve: --ledger: ${printable(s3.error)}\n`);
        return ExitCode.Usage;
      }
      const bucket = await openBucketStore(s3, settings, io.env);
      store = bucket;
      ledger = await bucketLedgerOf(bucket, s3.prefix, settings.get('leaseMs'));
    }
    if (input.list) {
      const open = await waiting(ledger, account);
      if (input.json) io.stdout.write(`${JSON.stringify({ command: 'approve', waiting: open })}\n`);
      else io.stderr.write(printableLines(listText(open)));
      return ExitCode.Ok;
    }
    const by = who(io.env);
    let missing = false;
    const results: { path: string; approved: ApprovalNote[] }[] = [];
    for (const path of input.paths) {
      const sha256 = await inputHash(path);
      const approved = await approveInput(ledger, account, { sha256, orders: input.orders, by, note: input.note });
      results.push({ path, approved });
      if (approved.length === 0) {
        missing = true;
        io.stderr.write(
          `${printable(path)}: no job of it waits for approval (an input changed since it was held must be run again)\n`,
        );
      }
      for (const n of approved)
        io.stderr.write(printableLines(`${printable(path)}: approved ${printable(n.orderNumber)}${costText(n)}\n`));
    }
    if (input.json) io.stdout.write(`${JSON.stringify({ command: 'approve', by, results })}\n`);
    return missing ? ExitCode.Invalid : ExitCode.Ok;
  } finally {
    store?.close();
    await pipeline.close();
  }
}

/** The input's sha256: a report's own record of it, else the file's bytes. */
async function inputHash(path: string): Promise<string> {
  if (path.endsWith(REPORT)) {
    const report = JSON.parse(await readFile(path, 'utf8')) as { input?: { sha256?: unknown } };
    if (typeof report.input?.sha256 === 'string') return report.input.sha256;
  }
  return hash('sha256', await readFile(path), 'hex');
}

/** Who approves: the user's login name. */
function who(env: Record<string, string | undefined>): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.USERNAME ?? 'unknown';
  }
}

function costText(n: ApprovalNote): string {
  return n.estimate === undefined ? '' : ` (estimate ${amountText(n.estimate, n.currency)})`;
}

function listText(open: readonly ApprovalNote[]): string {
  if (open.length === 0) return 'nothing waits for approval\n';
  const lines = open.map(
    (n) =>
      `${printable(n.orderNumber)}${costText(n)}  held ${n.heldAt}  from ${printable(n.input.file)}\n` +
      n.reasons.map((r) => `    ${printable(r)}\n`).join(''),
  );
  return `${open.length} job(s) wait for approval (htorder approve INPUT):\n${lines.join('')}`;
}
