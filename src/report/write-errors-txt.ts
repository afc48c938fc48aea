import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import type { JobResult, ReportError, ResultReport } from './model.js';
import { type NewFileOptions, writeFileAtomic } from '../storage/atomic-write.js';
import { printable } from '../core/printable.js';
import { builtItems } from './lazy-items.js';

/**
 * X.errors.txt: one line per error, compiler style, so editors and CI can jump to it:
 * `orders.yaml:42:9: jobs[3].items[0].quantity: message` or `orders.csv:12: quantity: message`.
 * Written only when something failed; otherwise a stale one from an earlier run is removed.
 */
export async function writeErrorsTxt(path: string, report: ResultReport, file?: NewFileOptions): Promise<boolean> {
  const lines = errorLines(report);
  const first = lines.next();
  if (first.done) {
    await rm(path, { force: true });
    return false;
  }
  await writeFileAtomic(
    path,
    (function* () {
      yield `${first.value}\n`;
      for (const line of lines) yield `${line}\n`;
    })(),
    file,
  );
  return true;
}

/**
 * Every error of the report, in document order of jobs and items, as compiler-style lines.
 * `label` names the input: its base name in errors.txt (which sits beside it), the path as the
 * user typed it on a terminal (clickable there).
 */
export function* errorLines(report: ResultReport, label = basename(report.input.file)): Generator<string> {
  for (const e of reportErrors(report)) yield formatReportError(e, label);
}

/** Every error of the report, in document order of jobs and items. */
function* reportErrors(report: ResultReport): Generator<ReportError> {
  yield* report.errors;
  for (const job of report.jobs) yield* jobErrors(job);
}

/** A job's errors, then its items', as errors.txt lists them. */
export function* jobErrors(job: JobResult): Generator<ReportError> {
  yield* job.errors;
  // builtItems: items nobody has read yet have no errors, and are not built just to look.
  for (const item of builtItems(job)) yield* item.errors;
}

/** Errors that only say another job's error held this one back: quoted only when nothing else is. */
const CONSEQUENCES = new Set(['run.held-back']);

/**
 * The report's first few errors as errors.txt has them (escaped, each cut at `maxChars`),
 * those that caused the failure before those that only follow from it, and how many there are
 * in all: what an alert quotes instead of pointing at the reports. Undefined when there is none.
 */
export function firstErrors(report: ResultReport, label: string, max = 3, maxChars = 300): string | undefined {
  return quotesOf(report, report.jobs, report.jobs, max).firstErrors(label, maxChars);
}

/**
 * Why a held input's jobs wait for approval: the first few reasons (a held job's errors, as
 * errors.txt has them, each cut at `maxChars`) and how many there are in all, as an alert
 * quotes them. Undefined when no job waits.
 */
export function heldReasons(report: ResultReport, label: string, max = 3, maxChars = 300): string | undefined {
  return quotesOf(report, report.jobs, report.jobs, max).heldReasons(label, maxChars);
}

/** What an alert quotes of a report (firstErrors, heldReasons), taken once: it holds a few errors, not the jobs. */
export interface ReportQuotes {
  firstErrors(label: string, maxChars?: number): string | undefined;
  heldReasons(label: string, maxChars?: number): string | undefined;
}

/**
 * The quotes of a report whose jobs are `jobs` (those with errors are enough) and `held` (those
 * awaiting approval are enough), each read once, no further than the first `max` errors need.
 */
export function quotesOf(
  report: Pick<ResultReport, 'errors' | 'summary'>,
  jobs: Iterable<JobResult>,
  held: Iterable<JobResult>,
  max = 3,
): ReportQuotes {
  const causes: ReportError[] = [];
  const others: ReportError[] = [];
  const all = (function* () {
    yield* report.errors;
    for (const job of jobs) yield* jobErrors(job);
  })();
  for (const e of all) {
    if (!CONSEQUENCES.has(e.code)) causes.push(e);
    else if (others.length < max) others.push(e);
    if (causes.length >= max) break;
  }
  const reasons: ReportError[] = [];
  let total = 0;
  for (const job of held) {
    if (job.status !== 'awaiting-approval') continue;
    total += job.errors.length;
    reasons.push(...job.errors.slice(0, max - reasons.length));
  }
  const errorTotal = report.summary.errors;
  const lines = (list: readonly ReportError[], label: string, maxChars: number) =>
    list.map((e) => clipped(formatReportError(e, label), maxChars));
  return {
    firstErrors: (label, maxChars = 300) => {
      const shown = [...lines(causes, label, maxChars), ...lines(others, label, maxChars)].slice(0, max);
      return quoted(shown, Math.max(errorTotal, shown.length), 'error');
    },
    heldReasons: (label, maxChars = 300) => quoted(lines(reasons, label, maxChars), total, 'reason'),
  };
}

const clipped = (line: string, max: number): string => (line.length > max ? `${line.slice(0, max - 1)}…` : line);

/** `first 3 of 7 errors: a | b | c`, `1 reason: a` — one line: receivers show an outside text on one line. */
function quoted(shown: readonly string[], total: number, noun: string): string | undefined {
  if (shown.length === 0) return undefined;
  const head =
    total > shown.length ? `first ${shown.length} of ${total} ${noun}s` : `${total} ${noun}${total === 1 ? '' : 's'}`;
  return `${head}: ${shown.join(' | ')}`;
}

/** Every warning of the report, file-level first, as `warning: ` + a compiler-style line. */
export function* warningLines(report: ResultReport, label = basename(report.input.file)): Generator<string> {
  for (const w of report.warnings) yield `warning: ${formatReportError(w, label)}`;
  for (const job of report.jobs) for (const w of job.warnings) yield `warning: ${formatReportError(w, label)}`;
}

/** One compiler-style line; control characters of every part (file, column, message) escaped (util/printable). */
export function formatReportError(e: ReportError, inputLabel: string): string {
  const s = e.source;
  const file = s?.file ?? inputLabel;
  if (s && 'row' in s) {
    const column = s.columnName ?? e.field;
    return printable(`${file}:${s.row}: ${column ? `${column}: ` : ''}${e.message}`);
  }
  const where = s && 'line' in s ? `${file}:${s.line}:${s.column}` : file;
  return printable(`${where}: ${e.field ? `${e.field}: ` : ''}${e.message}`);
}
