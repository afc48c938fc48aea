import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { bucketLedgerOf, openBucketStore } from '../app/bucket-ledger.js';
import { type OpenPipeline, openPipelineContext } from '../app/pipeline-context.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import { parseS3Url } from '../storage/s3/s3-url.js';
import type { ConfigFlags } from '../core/config/resolve-config.js';
import { nowDate } from '../core/clock.js';
import { ExitCode } from '../core/errors.js';
import { amountText } from '../core/money.js';
import { printable, printableLines } from '../core/printable.js';
import {
  approveInput,
  type ApproveResult,
  heldFrom,
  pruneApprovalNotes,
  waiting,
  type WaitingJob,
  type WaitingPage,
} from '../pipeline/approve.js';
import type { HeldNote } from '../pipeline/guard-notes.js';
import type { CommandIo } from './command-io.js';
import type { SandboxOptions } from './help.js';

export interface ApproveInput extends Partial<SandboxOptions> {
  paths: string[];
  orders?: string[];
  note?: string;
  list?: boolean;
  json?: boolean;
  /** `--list`: how many jobs to show, and how many to skip first. */
  limit?: number;
  offset?: number;
  /** `s3://BUCKET/PREFIX/`: a bucket watcher's ledger (its bucketLedger), instead of the state dir's. */
  ledger?: string;
  flags: ConfigFlags;
}

/** The reports htorder writes beside an input: `approve` takes any of them for the input. */
const REPORT_SUFFIXES = ['.result.json', '.result.csv', '.errors.txt'];

/** `--list` shows this many jobs unless `--limit` says otherwise. */
const LIST_LIMIT = 100;

/** Approved jobs named one by one, at most; the rest are counted. */
const NAMED = 20;

/** The ledger approve reads and writes, and how to name it to people. */
interface Target {
  ledger: LedgerStore;
  account: string;
  /** `the ledger of state dir D` or `the bucket's ledger at s3://…`. */
  where: string;
  /** How to point approve at a watcher's ledger, when this one has nothing of an input. */
  hint: string;
}

/**
 * `htorder approve`: the held jobs of each input (given as the held file, one of its reports,
 * or where it was dropped or run) approved in the ledger of the configured account, or
 * `--list`: what waits, a page at a time. Exit 0 when something was approved (or listed),
 * 1 when a path has no job waiting or cannot be found, 2 for usage, 3 when the account cannot
 * be learnt.
 */
export async function runApprove(input: ApproveInput, io: CommandIo): Promise<number> {
  if (!input.list && input.paths.length === 0) {
    io.stderr.write('htorder approve: give inputs or reports to approve, or --list\n');
    return ExitCode.Usage;
  }
  const page = pageOf(input);
  if (typeof page === 'string') {
    io.stderr.write(`htorder approve: ${page}\n`);
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
    const { session } = pipeline;
    const opened = await targetOf(input, pipeline, account, io);
    if (typeof opened === 'number') return opened;
    const { target } = opened;
    store = opened.store;
    // Housekeeping: old approval notes go (a failure here never stops an approval).
    await pruneApprovalNotes(target.ledger, account, session.clock.now(), stillHeld).catch((err: unknown) => {
      session.logger.debug({ err: (err as Error).message }, 'could not remove old approval notes');
    });
    if (input.list) {
      const open = await waiting(target.ledger, account, page);
      if (input.json)
        io.stdout.write(`${JSON.stringify({ command: 'approve', ...page, waiting: open.jobs, more: open.more })}\n`);
      else io.stderr.write(printableLines(listText(open, page.offset)));
      return ExitCode.Ok;
    }
    return await approveAll(input, { target, now: nowDate(session.clock), io });
  } finally {
    store?.close();
    await pipeline.close();
  }
}

/** The ledger approve works on: the state dir's, or a bucket watcher's (`--ledger`); an exit code for a bad URL. */
async function targetOf(
  input: ApproveInput,
  pipeline: OpenPipeline,
  account: string,
  io: CommandIo,
): Promise<{ target: Target; store?: { close(): void } } | number> {
  const { session } = pipeline;
  const { settings } = session;
  // A bucket watcher's ledger: --ledger, else the bucketLedger its recipe sets (unless the
  // ledger is a database, ledgerUrl: then a bucket watcher keeps it there too).
  const shared = settings.get('ledgerUrl');
  const bucketLedger = input.ledger ?? (shared === undefined ? settings.get('bucketLedger') : undefined);
  if (bucketLedger === undefined) {
    const target: Target = {
      ledger: pipeline.ledger,
      account,
      where:
        shared === undefined ? `the ledger of state dir ${session.config.stateDir}` : `the ledger database ${shared}`,
      hint:
        "a watcher's held inputs are in the watcher's own state dir: run approve as the watcher's user, with the " +
        'config file or profile that sets its stateDir, or set HTORDER_STATE_DIR to that dir',
    };
    return { target };
  }
  const s3 = parseS3Url(bucketLedger);
  if ('error' in s3) {
    io.stderr.write(`htorder approve: --ledger: ${printable(s3.error)}\n`);
    return ExitCode.Usage;
  }
  const store = await openBucketStore(s3, settings, io.env);
  const ledger = await bucketLedgerOf(store, s3.prefix, settings.get('leaseMs'));
  const where = `the bucket's ledger at ${bucketLedger}`;
  const hint = "set bucketLedger (or --ledger) to the watcher's, with its account";
  return { target: { ledger, account, where, hint }, store };
}

/** Approves each path's waiting jobs; exit 1 when any path had none or could not be found. */
async function approveAll(
  input: ApproveInput,
  { target, now, io }: { target: Target; now: Date; io: CommandIo },
): Promise<number> {
  const by = who(io.env);
  let failed = false;
  const results: { path: string; approved: WaitingJob[]; already: WaitingJob[] }[] = [];
  for (const path of input.paths) {
    const done = await approvePath(path, { ...input, by, now, target, cwd: io.cwd });
    if ('problem' in done) {
      failed = true;
      io.stderr.write(printableLines(`${done.problem}\n`));
      continue;
    }
    results.push({ path, approved: done.approved, already: done.already });
    io.stderr.write(printableLines(approvedText(path, done)));
  }
  if (input.json) io.stdout.write(`${JSON.stringify({ command: 'approve', by, results })}\n`);
  return failed ? ExitCode.Invalid : ExitCode.Ok;
}

function pageOf(input: ApproveInput): { offset: number; limit: number } | string {
  const limit = input.limit ?? LIST_LIMIT;
  const offset = input.offset ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100_000) return '--limit: a whole number from 1 to 100000';
  if (!Number.isSafeInteger(offset) || offset < 0) return '--offset: a whole number, 0 or more';
  return { offset, limit };
}

/** An approval note whose input still waits in a watcher's held/ is kept, however old (a bucket's: its watcher decides). */
async function stillHeld(held: HeldNote | undefined): Promise<boolean> {
  const at = held?.input.held;
  if (at === undefined) return false;
  if (at.startsWith('s3://')) return true;
  return (await lstat(at).catch(() => undefined))?.isFile() === true;
}

interface PathContext {
  orders?: readonly string[];
  note?: string;
  by: string;
  now: Date;
  target: Target;
  cwd: string;
}

/** One path approved: its jobs, or the one-line problem that stopped it. */
async function approvePath(path: string, ctx: PathContext): Promise<ApproveResult | { problem: string }> {
  const { ledger, account, where, hint } = ctx.target;
  const shown = printable(path);
  const id = await identify(resolve(ctx.cwd, path));
  if ('problem' in id) return { problem: `htorder approve: ${shown}: ${id.problem}` };
  let shas = id.sha256 === undefined ? [] : [id.sha256];
  if (id.sha256 === undefined) {
    // Gone from there: the input a watcher moved to held/, or a run's input moved away since.
    const there = await heldFrom(ledger, account, id.input);
    if (there.length === 0)
      return { problem: `htorder approve: ${shown}: no such file, and ${where} holds no input held from there` };
    // Several inputs dropped at one name over time: the operator says which.
    if (there.length > 1) {
      const names = there.map((n) => printable(n.input.held ?? n.input.file)).join(', ');
      return {
        problem: `htorder approve: ${shown}: ${there.length} held inputs came from there; approve one by its file: ${names}`,
      };
    }
    shas = there.map((n) => n.input.sha256);
  }
  const request = {
    ...(ctx.orders ? { orders: ctx.orders } : {}),
    by: ctx.by,
    ...(ctx.note ? { note: ctx.note } : {}),
  };
  const merged: ApproveResult = { approved: [], already: [] };
  for (const sha256 of shas) {
    const r = await approveInput(ledger, account, { ...request, sha256 }, ctx.now);
    merged.held ??= r.held;
    merged.approved.push(...r.approved);
    merged.already.push(...r.already);
  }
  if (merged.approved.length > 0 || merged.already.length > 0) return merged;
  if (merged.held) {
    const known = merged.held.jobs.map((j) => printable(j.orderNumber)).join(', ');
    return {
      problem: `${shown}: no job of it with the order(s) given waits for approval (its waiting jobs: ${known})`,
    };
  }
  const there = id.sha256 === undefined ? [] : await heldFrom(ledger, account, id.input);
  const waitsIn = there.find((n) => n.input.held !== undefined && n.input.held !== id.input)?.input.held;
  if (waitsIn !== undefined)
    return { problem: `${shown}: not the file that was held from there; approve ${printable(waitsIn)}` };
  if (there.length > 0)
    return {
      problem: `${shown}: changed since it was held (its waiting jobs are of its earlier bytes): run it again, then approve what waits`,
    };
  return { problem: `${shown}: no job of it waits for approval in ${where}\n  ${hint}` };
}

/**
 * What a path names: the sha256 of the input (a report's record of it, else the file's bytes),
 * or, when neither is there, the input's own path to look for in the held notes.
 */
async function identify(path: string): Promise<{ sha256?: string; input: string } | { problem: string }> {
  const suffix = REPORT_SUFFIXES.find((s) => path.endsWith(s) && path.length > s.length);
  const input = suffix ? path.slice(0, -suffix.length) : path;
  if (suffix) {
    const report = await reportSha(`${input}.result.json`);
    if (report !== undefined) return typeof report === 'string' ? { sha256: report, input } : report;
  }
  const own = await fileSha(input);
  if (own === undefined) return { input };
  return typeof own === 'string' ? { sha256: own, input } : own;
}

/** The sha256 a report records of its input; undefined when there is no such report. */
async function reportSha(path: string): Promise<string | { problem: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    return { problem: `cannot read ${path} (${code ?? 'error'})` };
  }
  try {
    const sha = (JSON.parse(text) as { input?: { sha256?: unknown } }).input?.sha256;
    if (typeof sha === 'string' && /^[0-9a-f]{64}$/.test(sha)) return sha;
  } catch {
    // Reported below, as for a report without the input's sha256.
  }
  return { problem: `${path} is not a result report htorder wrote (no input.sha256)` };
}

/** The sha256 of a regular file's bytes (never through a link); undefined when there is no such file. */
async function fileSha(path: string): Promise<string | { problem: string } | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP') return { problem: 'is a symbolic link; give the file itself' };
    return { problem: `cannot read it (${code ?? 'error'})` };
  }
  try {
    if (!(await handle.stat()).isFile()) return { problem: 'is not a file' };
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/** Who approves: the user's login name. */
function who(env: Record<string, string | undefined>): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.USERNAME ?? 'unknown';
  }
}

function costText(n: WaitingJob): string {
  return n.estimate === undefined ? '' : ` (estimate ${amountText(n.estimate, n.currency)})`;
}

/** Where the input of a waiting job is for people: the held file a watcher shows, else the path it was run from. */
function inputText(n: WaitingJob): string {
  return printable(n.input.held ?? n.input.file);
}

function approvedText(path: string, r: ApproveResult): string {
  const shown = printable(path);
  const lines = r.approved.slice(0, NAMED).map((n) => `${shown}: approved ${printable(n.orderNumber)}${costText(n)}\n`);
  if (r.approved.length > NAMED) lines.push(`${shown}: approved ${r.approved.length - NAMED} more job(s)\n`);
  for (const n of r.already.slice(0, NAMED)) {
    const a = n.approval;
    lines.push(
      `${shown}: ${printable(n.orderNumber)} was already approved${a ? ` by ${printable(a.by)} at ${a.at}` : ''}\n`,
    );
  }
  if (r.already.length > NAMED) lines.push(`${shown}: ${r.already.length - NAMED} more job(s) were already approved\n`);
  return lines.join('');
}

function listText(open: WaitingPage, offset: number): string {
  if (open.jobs.length === 0)
    return offset === 0 ? 'nothing waits for approval\n' : `no job waits after the first ${offset}\n`;
  const range = `${offset + 1}–${offset + open.jobs.length}`;
  const head =
    offset === 0 && !open.more
      ? `${open.jobs.length} job(s) wait for approval (htorder approve INPUT):\n`
      : `jobs ${range} of those that wait for approval, oldest first (htorder approve INPUT)` +
        `${open.more ? `; more with --offset ${offset + open.jobs.length}` : ''}:\n`;
  const lines = open.jobs.map(
    (n) =>
      `${printable(n.orderNumber)}${costText(n)}  held ${n.heldAt}  in ${inputText(n)}\n` +
      n.reasons.map((r) => `    ${printable(r)}\n`).join(''),
  );
  return `${head}${lines.join('')}`;
}
