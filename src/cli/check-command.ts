import { checkSettings } from '../app/check-settings.js';
import { type Clock, nowDate, nowIso, offsetClock, systemClock } from '../core/clock.js';
import { csvLimitsFrom, resolveSettings } from '../core/config/resolve-settings.js';
import { type LoadResult, loadManifest, windowedRead } from '../manifest/load-manifest.js';
import type { JobList } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import {
  type CsvLimits,
  INPUT_MAPPING_CHOICE,
  INPUT_NOT_FOUND,
  INPUT_UNREADABLE,
  INPUT_UNSUPPORTED,
} from '../manifest/read-input.js';
import { buildReport, type CheckedReport, checkedReport, reportHasErrors } from '../report/build-report.js';
import type { JobResult, ResultReport } from '../report/model.js';
import { reportPaths } from '../report/report-paths.js';
import type { ReportSpool } from '../report/report-spool.js';
import { SpooledReport } from '../report/spooled-report.js';
import { errorLines, jobErrors, warningLines } from '../report/write-errors-txt.js';
import { reportsBlocked, reportsUnwritable, writeReports } from '../report/write-reports.js';
import { printable, printableLines } from '../core/printable.js';
import { recognisedText } from './format-outcome.js';
import { leaveOutReports } from './report-inputs.js';
import { checkDetails, exitCodeOf, FIRST_ERRORS, first, jsonSummary, type Outcome } from './json-summary.js';

/**
 * The work of `htorder check FILE... [--mapping FILE] [--json]` — parse, schema check and local rules;
 * no network. Writes the three reports next to each input; prints a short summary to
 * stderr (`--json`: a machine summary to stdout).
 *
 * An input that cannot be read at all (missing, a directory, an unsupported extension) is
 * a usage error: nothing is written for it (there may be no directory to write into), the
 * other inputs are still checked, and the exit code is 2.
 */

/** Problems with the input path itself rather than its content. */
const USAGE_CODES = new Set([INPUT_NOT_FOUND, INPUT_UNREADABLE, INPUT_UNSUPPORTED, INPUT_MAPPING_CHOICE]);

/** How many errors per input the human summary shows before pointing at errors.txt. */
const SHOWN_ERRORS = 5;

export type CheckStatus = 'valid' | 'invalid' | 'unreadable';

export interface CheckOutcome extends Outcome {
  status: CheckStatus;
}

export interface CheckInputOptions {
  mapping?: Mapping;
  csvLimits?: Partial<CsvLimits>;
  defaultDeliveryMethod?: string;
  maxBytes?: number;
  /** The calendar clock of the report's times (the clockOffset setting moves it, as for run's reports). */
  clock?: Clock;
}

/**
 * How many findings check holds of a big template CSV read whole before it reads the file again
 * a window at a time. Read whole, such a file's document and jobs already take most of check's
 * memory budget (400 MB at 1,000,000 rows), and once its errors are spread over more than a few
 * dozen jobs its reports take a step of some hundred megabytes more as they are written, nearly
 * whatever their number beyond that (docs/performance.md, `check` of a big template CSV). So the
 * threshold sits below that step, a few faulty orders' findings, rather than at a count whose own
 * memory would fill the budget. The windowed route holds none of them, but reads the file a
 * second time and spends more CPU on each job: only a file with more findings than this pays for
 * it; a valid file, or one with a few faulty rows, is checked as any other input is.
 */
export const WHOLE_CHECK_FINDINGS = 100;

/** @internal Tests set `wholeUpToFindings` low (or to -1, every big input windowed) to switch on small files. */
export const checkRoute: { wholeUpToFindings: number } = { wholeUpToFindings: WHOLE_CHECK_FINDINGS };

/**
 * Checks one input and writes its reports. A template CSV of windowedRead.fromBytes or more is
 * read whole first; only when its findings pass checkRoute.wholeUpToFindings is it read again a
 * window at a time, as `run` reads it, and its reports written through a spool (checkWindowed):
 * what check holds then does not grow with its jobs or their findings, and the outcome's report
 * lists, of its jobs, only those whose findings its summaries quote.
 */
export async function checkInput(file: string, opts: CheckInputOptions = {}): Promise<CheckOutcome> {
  const { mapping, csvLimits, defaultDeliveryMethod, maxBytes, clock = systemClock } = opts;
  const startedAt = nowDate(clock);
  const loaded = await loadManifest(file, {
    ...(mapping ? { mapping } : {}),
    csv: csvLimits,
    defaultDeliveryMethod,
    ...(maxBytes === undefined ? {} : { maxBytes }),
    windowedFrom: windowedRead.fromBytes,
    ...(windowedRead.windowJobs === undefined ? {} : { windowJobs: windowedRead.windowJobs }),
    wholeUpToFindings: checkRoute.wholeUpToFindings,
    // A temporary of result.json's: one a killed check left goes with that report's other strays.
    findingsBeside: reportPaths(file).json,
  });
  try {
    const usage = loaded.diagnostics.find((d) => USAGE_CODES.has(d.code));
    if (usage) return { file, status: 'unreadable', problem: usage.message };
    const blocked = await reportsBlocked(reportPaths(file));
    if (blocked !== undefined) return { file, status: 'unreadable', problem: blocked };
    return await checkRead(loaded, { ...opts, startedAt, clock });
  } catch (err) {
    // A folder the user may not write (a read-only mount): named on stderr, exit 2, the other inputs checked.
    const problem = reportsUnwritable(err);
    if (problem === undefined) throw err;
    return { file, status: 'unreadable', problem };
  } finally {
    loaded.release?.();
  }
}

/** checkInput's checks and reports of an input it could read. */
async function checkRead(
  loaded: LoadResult<JobList>,
  opts: CheckInputOptions & { startedAt: Date; clock: Clock },
): Promise<CheckOutcome> {
  const { mapping, csvLimits, startedAt, clock } = opts;
  if (loaded.jobFindings !== undefined) return await checkWindowed(loaded, { csvLimits, startedAt, clock });
  const report = buildReport({
    command: 'check',
    input: loaded.input,
    recognised: loaded.recognised,
    manifest: loaded.manifest,
    diagnostics: loaded.diagnostics,
    startedAt,
    finishedAt: nowDate(clock),
  });
  const reports = await writeReports(report, {
    manifest: loaded.manifest,
    mapping: loaded.recognised?.mapping ?? mapping,
    csvLimits,
    // check has nothing else to do while its reports are written.
    onThisThread: true,
  });
  return { file: loaded.input.file, status: reportHasErrors(report) ? 'invalid' : 'valid', report, reports };
}

/**
 * check of a windowed read: each job's result made from check's findings on it, in order, and
 * handed to a report spool (temporary files beside the reports) at once, its findings let go;
 * the three reports are then assembled from the spool as `run` writes them, the same bytes as
 * buildReport's report gives. The outcome's report is the report's head and summary with, of
 * its jobs, only those whose errors and warnings the summaries quote (QUOTED): none of the
 * others is held once the reports are written.
 */
async function checkWindowed(
  loaded: LoadResult<JobList>,
  opts: { csvLimits?: Partial<CsvLimits>; startedAt: Date; clock: Clock },
): Promise<CheckOutcome> {
  const { input, manifest, diagnostics, jobFindings } = loaded;
  // The report takes check's findings from here on, each job's until its result is spooled.
  loaded.diagnostics = [];
  const checked = checkedReport({
    command: 'check',
    input,
    manifest,
    diagnostics,
    ...(jobFindings === undefined ? {} : { jobFindings }),
    startedAt: opts.startedAt,
    finishedAt: nowDate(opts.clock),
  });
  // Every job ends before the reports are written: nothing is rendered from pending jobs.
  const pending = { at: () => undefined, render: (j: number) => checked.job(j) };
  const spooled = await SpooledReport.create(checked.head, checked.jobCount, pending, reportPaths(input.file));
  try {
    const quoted = await spoolEveryJob(checked, spooled.spool);
    spooled.refreshSummary();
    const reports = await writeReports(spooled.report, {
      manifest,
      csvLimits: opts.csvLimits,
      spooled,
      onThisThread: true,
    });
    const report: ResultReport = { ...spooled.report, jobs: quoted };
    return { file: input.file, status: spooled.hasErrors() ? 'invalid' : 'valid', report, reports };
  } finally {
    await spooled.close();
  }
}

/**
 * @internal Told of each job's result as it is handed to the spool: what a test watches to see
 * that check holds no job's result once it is written.
 */
export const checkProbe: { spooled?: (result: JobResult) => void } = {};

/**
 * How many of the jobs with errors (and with warnings) a windowed check keeps for its summaries:
 * as many as `--json` quotes errors (checkDetails), which is more than the human summary shows.
 */
const QUOTED = FIRST_ERRORS;

/**
 * Ends every job of `checked` in the spool, in order, letting go of check's findings on each
 * (waiting for the disk when the spool asks); answers the first jobs with errors and with
 * warnings, in order, up to QUOTED of each: the jobs the summaries' first lines come from.
 */
async function spoolEveryJob(checked: CheckedReport, spool: ReportSpool): Promise<JobResult[]> {
  const quoted: JobResult[] = [];
  let errors = 0;
  let warnings = 0;
  for (let j = 0; j < checked.jobCount; j++) {
    const result = checked.job(j);
    checked.forget(j);
    let own = 0;
    for (const _ of jobErrors(result)) own++;
    const warned = result.warnings.length;
    if ((own > 0 && errors < QUOTED) || (warned > 0 && warnings < QUOTED)) {
      quoted.push(result);
      errors += own;
      warnings += warned;
    }
    // Its items built now, while its window is held: the spool serialises it later, when the
    // window may have been let go and would be read again.
    void result.items;
    checkProbe.spooled?.(result);
    if (!spool.end(j, result)) await spool.flushed();
  }
  return quoted;
}

/** `htorder check`'s action: checks every input in turn and returns the exit code. */
export async function runCheckCommand(
  files: readonly string[],
  opts: { mapping?: string; json?: boolean },
): Promise<number> {
  // A broken mapping throws UsageError (exit 2) before any input is judged.
  // Loaded only with --mapping: most inputs need no mapping (and not its CSV and jsonata code).
  const mapping = opts.mapping
    ? await (await import('../manifest/mapping/load-mapping.js')).loadMapping(opts.mapping)
    : undefined;
  // check needs no credentials; of the settings it reads only the input limits and the default
  // delivery method, but a bad value of any is said now, as every command does at its start.
  const settings = resolveSettings({ env: process.env, cwd: process.cwd() });
  checkSettings(settings);
  const csvLimits = csvLimitsFrom(settings);
  const defaultMethod = settings.get('defaultDeliveryMethod');
  const maxBytes = settings.get('manifestMaxBytes');
  const clock = offsetClock(settings.get('clockOffset'));
  if (settings.get('clockOffset') !== 0) {
    // As every command says it at its start: a rehearsal's setting is never left on unnoticed.
    const { source } = settings.raw('clockOffset') ?? { source: 'clockOffset' };
    process.stderr.write(`warning: the calendar clock is moved by ${source}: it is ${nowIso(clock)}\n`);
  }
  const { inputs, skipped } = leaveOutReports(files, 'check', process.stderr);
  const outcomes: CheckOutcome[] = [];
  for (const file of inputs) {
    const outcome = await checkInput(file, {
      mapping,
      csvLimits,
      defaultDeliveryMethod: defaultMethod,
      maxBytes,
      clock,
    });
    outcomes.push(outcome);
    process.stderr.write(humanSummary(outcome));
  }
  const exitCode = exitCodeOf(outcomes);
  if (opts.json)
    process.stdout.write(`${JSON.stringify(jsonSummary('check', outcomes, exitCode, checkDetails, skipped))}\n`);
  return exitCode;
}

/** What `check` prints for one input; control characters from the input escaped (core/printable.ts). */
export function humanSummary(o: CheckOutcome): string {
  if (o.status === 'unreadable' || !o.report)
    return printableLines(`${printable(o.file)}: ${o.problem ?? 'cannot be read'} (not checked, no reports written)\n`);
  const r = o.report;
  // Names are one line each (a file name may hold a line feed): escaped whole, not as lines.
  const file = printable(o.file);
  const { valid, invalid, skipped } = r.summary.byStatus;
  const lines: string[] = [];
  if (r.mapping) lines.push(`${file}: ${recognisedText(r.mapping)}`);
  const placed = r.summary.jobs - skipped;
  const jobs = `${placed} job${placed === 1 ? '' : 's'}`;
  if (o.status === 'valid') {
    lines.push(`${file}: ok, ${jobs} valid${r.summary.warnings ? `, ${r.summary.warnings} warning(s)` : ''}`);
  } else {
    lines.push(
      `${file}: ${invalid} of ${jobs} invalid, ${valid} valid; ${r.summary.errors} error${r.summary.errors === 1 ? '' : 's'}`,
    );
    for (const line of first(errorLines(r, r.input.file), SHOWN_ERRORS)) lines.push(`  ${line}`);
    if (r.summary.errors > SHOWN_ERRORS)
      lines.push(`  ... ${r.summary.errors - SHOWN_ERRORS} more in ${printable(o.reports?.errors ?? 'errors.txt')}`);
  }
  for (const w of first(warningLines(r, r.input.file), SHOWN_ERRORS)) lines.push(`  ${w}`);
  // Rows an ERP mapping left out, each with its row and the mapping's reason: not errors.
  for (const job of r.jobs) {
    if (job.status !== 'skipped') continue;
    const rows = job.items.map((i) => (i.source && 'row' in i.source ? i.source.row : undefined));
    const what = job.orderNumber ? ` (order ${job.orderNumber})` : '';
    lines.push(`  skipped: ${printable(r.input.file)}:${rows.join(',')}${what}: ${job.reason ?? ''}`);
  }
  const written = [o.reports?.json, o.reports?.csv, o.reports?.errors].filter((f) => f !== undefined);
  lines.push(`  reports: ${written.map(printable).join(', ')}`);
  return printableLines(`${lines.join('\n')}\n`);
}
