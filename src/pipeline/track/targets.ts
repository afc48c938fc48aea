import { constants, existsSync } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { untrustedFile } from '../../core/file-owner.js';
import { canonicalAccount } from '../../storage/ledger/account-key.js';
import { FolderLedger } from '../../storage/ledger/folder-ledger.js';
import { type LedgerEntryUnreadableError, type LedgerStore, lookAtEntry } from '../../storage/ledger/model.js';
import { reportPaths } from '../../report/report-paths.js';
import type { ResultReport } from '../../report/model.js';
import type { TrackTarget } from '../../report/tracking-model.js';

/**
 * Where the jobs to follow come from (`htorder track [REPORT | INPUT | DIR]...`):
 * - a result report `X.result.json`, or an input `X` whose report exists: its submitted jobs;
 * - a directory holding `ledger/` (a state dir): that ledger's submitted orders of the account;
 * - any other directory: every `*.result.json` directly inside it;
 * - nothing: the ledger of the configured state dir.
 * Ledger orders are matched to the report of the input that submitted them, when it is still
 * there, so their tracking is written too; otherwise they are only shown.
 *
 * A report is written by whoever may write its folder, so it is trusted only as far as the
 * ledger vouches for it: a report another user owns, or that group or others may write, is not
 * read at all, and of a report that is read only the jobs the ledger records as this account's
 * submission of that very order are followed (the job number and order number are both the
 * ledger's). Each refusal is one line in `problems`.
 */
export interface Targets {
  targets: TrackTarget[];
  /** The reports read, by path: tracking is written back into them. */
  reports: Map<string, ResultReport>;
  /** The mode and group of each report read, by path: what it and its tracking file keep when written. */
  files: Map<string, ReportFile>;
  /** Arguments or files that could not be used (usage problems), and jobs not followed. */
  problems: string[];
}

/** A report's permission bits and group, as read. */
export interface ReportFile {
  mode: number;
  gid: number;
}

export interface TargetOptions {
  stateDir: string;
  /** The configured ledger (the state dir's, or the database of ledgerUrl); default the state dir's. */
  ledger?: LedgerStore;
  /** Ledger account key (region + account id, ledger/account-key.ts); asked only when a ledger is read. */
  account: () => Promise<string>;
}

/**
 * Whether the ledger records `jobNumber` as this account's submission of `orderNumber`;
 * `unreadable` when the order's entry cannot be read (it vouches for nothing then).
 */
type Vouch = (orderNumber: string | null, jobNumber: number) => Promise<boolean | 'unreadable'>;

function vouchedBy(ledger: LedgerStore, account: () => Promise<string>): Vouch {
  return async (orderNumber, jobNumber) => {
    if (typeof orderNumber !== 'string') return false;
    const entry = await lookAtEntry(ledger, { account: await account(), orderNumber });
    if (entry === 'unreadable') return entry;
    return entry?.state === 'submitted' && entry.jobNumber === jobNumber;
  };
}

export async function collectTargets(args: readonly string[], opts: TargetOptions): Promise<Targets> {
  const out: Targets = { targets: [], reports: new Map(), files: new Map(), problems: [] };
  if (args.length === 0) {
    await fromLedger(opts.ledger ?? new FolderLedger(opts.stateDir), opts.stateDir, opts, out);
    return out;
  }
  // Reports named directly are vouched for by the configured ledger.
  const vouch = vouchedBy(opts.ledger ?? new FolderLedger(opts.stateDir), opts.account);
  for (const arg of args) {
    const info = await stat(arg).catch(() => undefined);
    if (info?.isDirectory()) {
      if (existsSync(join(arg, 'ledger'))) await fromLedger(new FolderLedger(arg), arg, opts, out);
      else {
        const names = (await readdir(arg)).filter((n) => n.endsWith('.result.json')).sort();
        if (names.length === 0) out.problems.push(`${arg}: no *.result.json reports (and no ledger/) in this folder`);
        for (const name of names) await fromReport(join(arg, name), out, vouch);
      }
    } else if (info && arg.endsWith('.result.json')) await fromReport(arg, out, vouch);
    else if (existsSync(reportPaths(arg).json)) await fromReport(reportPaths(arg).json, out, vouch);
    else out.problems.push(`${arg}: no such report (expected X.result.json, an input with a report, or a folder)`);
  }
  return out;
}

/**
 * The report at `path`, read through one handle opened without following a link, so what is
 * judged (its owner and mode) is what is read; a string saying why it is not read otherwise.
 */
async function readReport(path: string): Promise<{ text: string; file: ReportFile } | string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ELOOP' ? 'not read: it is a symbolic link' : `cannot be read (${code ?? (err as Error).message})`;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return 'not read: it is not a regular file';
    const why = untrustedFile(info);
    if (why !== undefined) return `not read: ${why}; its jobs are not followed`;
    return { text: await handle.readFile('utf8'), file: { mode: info.mode & 0o777, gid: info.gid } };
  } finally {
    await handle.close();
  }
}

async function fromReport(path: string, out: Targets, vouch: Vouch): Promise<void> {
  const key = resolve(path);
  if (out.reports.has(key)) return;
  const read = await readReport(path);
  if (typeof read === 'string') {
    out.problems.push(`${path}: ${read}`);
    return;
  }
  let report: ResultReport;
  try {
    report = JSON.parse(read.text) as ResultReport;
  } catch (err) {
    out.problems.push(`${path}: cannot be read as a result report (${(err as Error).message})`);
    return;
  }
  if (report?.reportVersion !== 1 || !Array.isArray(report.jobs)) {
    out.problems.push(`${path}: not an htorder result report (reportVersion 1)`);
    return;
  }
  out.reports.set(key, report);
  out.files.set(key, read.file);
  for (const job of report.jobs) {
    if (typeof job.jobNumber !== 'number') continue;
    const vouched = await vouch(job.orderNumber, job.jobNumber);
    if (vouched !== true) {
      const why =
        vouched === 'unreadable'
          ? "the order's ledger entry cannot be read (htorder run names the file)"
          : "the ledger does not record it as this account's job for that order";
      out.problems.push(`${path}: job ${job.jobNumber} (order ${String(job.orderNumber)}) is not followed: ${why}`);
      continue;
    }
    out.targets.push({
      jobNumber: job.jobNumber,
      orderNumber: job.orderNumber,
      reportFile: key,
      jobIndex: job.index,
      ...(job.tracking ? { previous: job.tracking } : {}),
    });
  }
}

async function fromLedger(ledger: LedgerStore, where: string, opts: TargetOptions, out: Targets): Promise<void> {
  const account = await opts.account();
  const vouch = vouchedBy(ledger, opts.account);
  const known = new Set(out.targets.map((t) => t.jobNumber));
  let any = false;
  // Every entry of the account, also those written under htorder 0.1's key (`<baseUrl>#<id>`),
  // as in a ledger the pipeline has not opened since (an old `.htorder/` given as argument).
  // Orders past the ledger's retention are folded (ledgerRetention): long despatched, not followed.
  // An entry that cannot be read is named and skipped: every other order is still followed.
  const unreadable = (err: LedgerEntryUnreadableError) =>
    out.problems.push(`${err.message}: its order is not followed`);
  for await (const entry of ledger.entries(undefined, { folded: false, unreadable })) {
    if (entry.state !== 'submitted' || entry.jobNumber === undefined) continue;
    if (entry.account !== account && canonicalAccount(entry.account) !== account) continue;
    any = true;
    // The report of the input that submitted it, if it is still where it was (read once).
    const reportFile = entry.input ? reportPaths(entry.input.file).json : undefined;
    if (reportFile && !out.reports.has(resolve(reportFile)) && existsSync(reportFile)) {
      const before = out.targets.length;
      await fromReport(reportFile, out, vouch);
      for (const t of out.targets.slice(before)) known.add(t.jobNumber);
    }
    if (!known.has(entry.jobNumber)) {
      known.add(entry.jobNumber);
      out.targets.push({ jobNumber: entry.jobNumber, orderNumber: entry.orderNumber });
    }
  }
  if (!any) out.problems.push(`${where}: the ledger has no submitted orders for this account`);
}
