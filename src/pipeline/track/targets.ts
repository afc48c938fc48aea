import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { canonicalAccount } from '../../storage/ledger/account-key.js';
import { FolderLedger } from '../../storage/ledger/folder-ledger.js';
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
 */
export interface Targets {
  targets: TrackTarget[];
  /** The reports read, by path: tracking is written back into them. */
  reports: Map<string, ResultReport>;
  /** Arguments or files that could not be used (usage problems). */
  problems: string[];
}

export interface TargetOptions {
  stateDir: string;
  /** Ledger account key (region + account id, ledger/account-key.ts); asked only when a ledger is read. */
  account: () => Promise<string>;
}

export async function collectTargets(args: readonly string[], opts: TargetOptions): Promise<Targets> {
  const out: Targets = { targets: [], reports: new Map(), problems: [] };
  if (args.length === 0) {
    await fromLedger(opts.stateDir, opts, out);
    return out;
  }
  for (const arg of args) {
    const info = await stat(arg).catch(() => undefined);
    if (info?.isDirectory()) {
      if (existsSync(join(arg, 'ledger'))) await fromLedger(arg, opts, out);
      else {
        const names = (await readdir(arg)).filter((n) => n.endsWith('.result.json')).sort();
        if (names.length === 0) out.problems.push(`${arg}: no *.result.json reports (and no ledger/) in this folder`);
        for (const name of names) await fromReport(join(arg, name), out);
      }
    } else if (info && arg.endsWith('.result.json')) await fromReport(arg, out);
    else if (existsSync(reportPaths(arg).json)) await fromReport(reportPaths(arg).json, out);
    else out.problems.push(`${arg}: no such report (expected X.result.json, an input with a report, or a folder)`);
  }
  return out;
}

async function fromReport(path: string, out: Targets): Promise<void> {
  const key = resolve(path);
  if (out.reports.has(key)) return;
  let report: ResultReport;
  try {
    report = JSON.parse(await readFile(path, 'utf8')) as ResultReport;
  } catch (err) {
    out.problems.push(`${path}: cannot be read as a result report (${(err as Error).message})`);
    return;
  }
  if (report?.reportVersion !== 1 || !Array.isArray(report.jobs)) {
    out.problems.push(`${path}: not an htorder result report (reportVersion 1)`);
    return;
  }
  out.reports.set(key, report);
  for (const job of report.jobs) {
    if (typeof job.jobNumber !== 'number') continue;
    out.targets.push({
      jobNumber: job.jobNumber,
      orderNumber: job.orderNumber,
      reportFile: key,
      jobIndex: job.index,
      ...(job.tracking ? { previous: job.tracking } : {}),
    });
  }
}

async function fromLedger(stateDir: string, opts: TargetOptions, out: Targets): Promise<void> {
  const account = await opts.account();
  const ledger = new FolderLedger(stateDir);
  const known = new Set(out.targets.map((t) => t.jobNumber));
  let any = false;
  // Every entry of the account, also those written under htorder 0.1's key (`<baseUrl>#<id>`),
  // as in a ledger the pipeline has not opened since (an old `.htorder/` given as argument).
  for await (const entry of ledger.entries()) {
    if (entry.state !== 'submitted' || entry.jobNumber === undefined) continue;
    if (entry.account !== account && canonicalAccount(entry.account) !== account) continue;
    any = true;
    // The report of the input that submitted it, if it is still where it was (read once).
    const reportFile = entry.input ? reportPaths(entry.input.file).json : undefined;
    if (reportFile && !out.reports.has(resolve(reportFile)) && existsSync(reportFile)) {
      const before = out.targets.length;
      await fromReport(reportFile, out);
      for (const t of out.targets.slice(before)) known.add(t.jobNumber);
    }
    if (!known.has(entry.jobNumber)) {
      known.add(entry.jobNumber);
      out.targets.push({ jobNumber: entry.jobNumber, orderNumber: entry.orderNumber });
    }
  }
  if (!any) out.problems.push(`${stateDir}: the ledger has no submitted orders for this account`);
}
