import { invalidJobs, isError } from '../manifest/diagnostics.js';
import { itemRowOf } from '../manifest/csv/item-rows.js';
import { jobIfReadable } from '../manifest/csv/job-view.js';
import { itemIndexOf, jobIndexOf } from '../manifest/field-path.js';
import type {
  Diagnostic,
  JobFindings,
  JobList,
  Manifest,
  ManifestFormat,
  SkippedRows,
  SourceLocation,
} from '../manifest/model.js';
import { VERSION } from '../core/version.js';
import { builtItems, itemCount, itemDeferrer, type ItemSource } from './lazy-items.js';
import {
  JOB_STATUSES,
  type JobResult,
  type JobStatus,
  type ReportCommand,
  type ReportError,
  type ReportSource,
  type ReportSummary,
  type ResultReport,
} from './model.js';

/**
 * Builds the report model from a loaded manifest and its diagnostics. Diagnostics are
 * filed where they belong: `jobs[j].items[k]…` on the item, `jobs[j]…` on the job,
 * anything else (syntax, `version`, `defaults`) at file level — which makes every job
 * invalid, because a manifest is all or nothing.
 */

export interface BuildReportInput {
  command: ReportCommand;
  input: { file: string; format?: ManifestFormat; sha256?: string };
  /** The preset a shop export was recognised as (LoadResult.recognised). */
  recognised?: { preset: string; matchedColumns: string[] };
  manifest?: Manifest<JobList>;
  diagnostics: readonly Diagnostic[];
  /** A windowed read's findings on its jobs (LoadResult.jobFindings), besides `diagnostics`. */
  jobFindings?: JobFindings;
  startedAt: Date;
  finishedAt?: Date;
}

export function buildReport(x: BuildReportInput): ResultReport {
  const checked = checkedReport(x);
  const jobs = new Array<JobResult>(checked.jobCount);
  for (let j = 0; j < jobs.length; j++) jobs[j] = checked.job(j);
  return refreshSummary({ ...checked.head, jobs });
}

/**
 * A report as check leaves it, one job at a time: its head (every key but `jobs`, with an
 * empty summary) and job `j`'s result made afresh on each call, as buildReport has it. Holds
 * check's findings only for the jobs that have any.
 */
export interface CheckedReport {
  head: Omit<ResultReport, 'jobs'>;
  /** The manifest's jobs, then the groups of rows a mapping's skip rules left out. */
  jobCount: number;
  /** Job `j`'s result; `orderNumber` stands in for the manifest's when its job can no longer be read. */
  job(j: number, orderNumber?: string): JobResult;
  /**
   * Lets go of check's findings on job `j`, whose result nobody makes from check again (a run
   * spooled it before any write of the report began): job(j) then shows none.
   */
  forget(j: number): void;
}

export function checkedReport(x: BuildReportInput): CheckedReport {
  const file = x.input.file;
  const { all: fileLevelError, jobs: badJobs } = invalidJobs(x.diagnostics);
  const manifest = x.manifest;
  const manifestJobs = manifest?.jobs.length ?? 0;
  const skipped = manifest?.skipped ?? [];
  const jobCount = manifestJobs + skipped.length;
  // `items`, built on first use (lazy-items.ts): check writes a million items without keeping them.
  const items = manifestItems(manifest);
  const defer = itemDeferrer(items, manifestJobs);
  const head: Omit<ResultReport, 'jobs'> = {
    reportVersion: 1,
    command: x.command,
    htorderVersion: VERSION,
    input: { file, sha256: x.input.sha256 ?? null, format: x.input.format ?? null },
    ...(x.recognised ? { mapping: { preset: x.recognised.preset, matchedColumns: x.recognised.matchedColumns } } : {}),
    startedAt: x.startedAt.toISOString(),
    finishedAt: x.finishedAt ? x.finishedAt.toISOString() : null,
    summary: emptySummary(),
    errors: [],
    warnings: [],
  };
  // Each diagnostic where it belongs: on its job (or the job's item), else at file level. A
  // job's are kept as the read made them and filed anew in each result made: an invalid job
  // of a big input keeps no report objects of its own until it is written.
  const findings = new Map<number, Diagnostic[]>();
  for (const d of x.diagnostics) {
    const j = jobIndexOf(d.field);
    if (j === undefined || j >= jobCount) {
      append(head, isError(d) ? 'errors' : 'warnings', toReportError(d, file));
      continue;
    }
    const list = findings.get(j);
    if (list === undefined) findings.set(j, [d]);
    else list.push(d);
  }
  // A windowed read's come a window at a time, as its first job is made: each held, as the read's
  // own are, until its job is let go (forget).
  const jobFindings = x.jobFindings;
  const job = (j: number, orderNumber?: string): JobResult => {
    if (j >= manifestJobs) return skippedResult(skipped[j - manifestJobs], j, findings.get(j), file);
    const taken = jobFindings?.take(j);
    if (taken !== undefined) for (const [k, list] of taken) findings.set(k, list);
    const status: JobStatus = fileLevelError || badJobs.has(j) || jobFindings?.refuses(j) ? 'invalid' : 'valid';
    // A windowed read's file changed since: the job's values are gone but what its state knows.
    const mj = manifest && jobIfReadable(manifest.jobs, j);
    const result = defer({
      index: j,
      orderNumber: mj === undefined && orderNumber !== undefined ? orderNumber : str(mj?.orderNumber),
      status,
      source: jobSource(manifest, j, file),
      jobNumber: null,
      dateDue: str(mj?.dateDue),
      totalJobCost: null,
      estimatedCost: null,
      warnings: NONE,
      errors: NONE,
    });
    const own = findings.get(j);
    if (own !== undefined) fileFindings(result, own, file);
    return result;
  };
  return { head, jobCount, job, forget: (j) => findings.delete(j) };
}

/**
 * Files check's findings on a job: warnings on the job; an error on an item's field on that
 * item (when the job has it), any other on the job. A finding that names an item builds the
 * job's items, each then `invalid` when it has errors of its own, else its job's status.
 */
function fileFindings(job: JobResult, findings: readonly Diagnostic[], file: string): void {
  let touched = false;
  for (const d of findings) {
    const error = toReportError(d, file);
    const k = itemIndexOf(d.field)?.[1] ?? -1;
    const item = k >= 0 ? job.items[k] : undefined;
    if (k >= 0) touched = true;
    if (!isError(d)) append(job, 'warnings', error);
    else if (item) item.errors.push(error);
    else append(job, 'errors', error);
  }
  if (touched) for (const item of job.items) item.status = item.errors.length > 0 ? 'invalid' : job.status;
}

/**
 * A job's `warnings` and `errors` while it has none: one frozen empty array shared by every
 * job, not two arrays per job. Whoever adds a finding replaces the
 * array (as `append` does here and the pipeline's job-report.ts does); pushing onto it throws.
 */
const NONE: readonly ReportError[] = Object.freeze([]);

function append(
  holder: { warnings: readonly ReportError[]; errors: readonly ReportError[] },
  key: 'warnings' | 'errors',
  e: ReportError,
) {
  // The arrays this module made (never NONE) are its own to grow; anything else is replaced.
  const list = holder[key];
  if (list === NONE) holder[key] = [e];
  else (list as ReportError[]).push(e);
}

/** Recomputes the summary after the pipeline changed statuses or added errors. */
export function refreshSummary(report: ResultReport): ResultReport {
  const s = emptySummary();
  s.jobs = report.jobs.length;
  s.errors = report.errors.length;
  s.warnings = report.warnings.length;
  for (const job of report.jobs) addToSummary(s, job);
  report.summary = s;
  return report;
}

/** Adds one job's counts to a summary (all but `jobs`, which is the report's job count). */
export function addToSummary(s: ReportSummary, job: JobResult): void {
  s.byStatus[job.status]++;
  s.items += itemCount(job);
  s.errors += job.errors.length;
  let artwork = 0;
  for (const item of builtItems(job)) {
    s.errors += item.errors.length;
    if (item.needsArtworkToBeUploaded === true) artwork++;
  }
  s.warnings += job.warnings.length;
  if (artwork > 0) s.artworkNeeded = (s.artworkNeeded ?? 0) + artwork;
}

/** Statuses that are failures of a kind: a report with any shows errors. */
const FAILED: ReadonlySet<JobStatus> = new Set<JobStatus>([
  'invalid',
  'failed',
  'in-doubt',
  'not-submitted',
  'awaiting-approval',
]);

/** True when the report shows a failure of any kind (drives errors.txt and exit codes). */
export function reportHasErrors(report: ResultReport): boolean {
  return report.summary.errors > 0 || report.jobs.some((j) => FAILED.has(j.status));
}

/** reportHasErrors from the report's summary alone, when that is fresh (its counts by status say the same). */
export function summaryHasErrors(summary: ReportSummary): boolean {
  return summary.errors > 0 || [...FAILED].some((s) => summary.byStatus[s] > 0);
}

export function toReportError(d: Diagnostic, inputFile: string): ReportError {
  return { code: d.code, message: d.message, field: d.field ?? null, source: toReportSource(d.source, inputFile) };
}

export function toReportSource(loc: SourceLocation | undefined, inputFile: string): ReportSource | null {
  if (!loc) return null;
  // The usual CSV case as a literal of one key: the general form below makes a bigger object.
  if (loc.row !== undefined && loc.columnName === undefined && (!loc.file || loc.file === inputFile))
    return { row: loc.row };
  const other = loc.file && loc.file !== inputFile ? { file: loc.file } : {};
  if (loc.row !== undefined)
    return { row: loc.row, ...(loc.columnName !== undefined ? { columnName: loc.columnName } : {}), ...other };
  if (loc.line !== undefined) return { line: loc.line, column: loc.column ?? 1, ...other };
  return null;
}

/**
 * A job's row is its first item's (csv-source-map.ts); read from the table, without a path to
 * parse. Jobs and items have a function each: one function for both, with an optional item,
 * raises check's peak memory on a big CSV (`npm run bench:check`).
 */
function jobSource(manifest: Manifest<JobList> | undefined, j: number, file: string): ReportSource | null {
  const row = manifest?.csv === undefined ? undefined : itemRowOf(manifest.csv, j, 0);
  if (row !== undefined) return { row };
  return toReportSource(manifest?.sources.locate(`jobs[${j}]`), file);
}

function itemSource(manifest: Manifest<JobList>, j: number, k: number): ReportSource | null {
  const row = manifest.csv === undefined ? undefined : itemRowOf(manifest.csv, j, k);
  if (row !== undefined) return { row };
  return toReportSource(manifest.sources.locate(`jobs[${j}].items[${k}]`), manifest.file);
}

/** Item results as buildReport defines them, made when first needed (one source per report, not per job). */
function manifestItems(manifest: Manifest<JobList> | undefined): ItemSource {
  return {
    count: (j) => (manifest && jobIfReadable(manifest.jobs, j))?.items?.length ?? 0,
    build: (j, k, status) => {
      const item = (manifest && jobIfReadable(manifest.jobs, j))?.items?.[k];
      return {
        index: k,
        source: manifest ? itemSource(manifest, j, k) : null,
        itemType: str(item?.itemType),
        code: str(item?.code),
        quantity: typeof item?.quantity === 'number' ? item.quantity : sumSizes(item?.sizeQuantities),
        status,
        newAssetSku: null,
        needsArtworkToBeUploaded: null,
        errors: [],
      };
    },
  };
}

/** A summary of nothing: every count 0, every job status present (the dashboard's too). */
export function emptySummary(): ReportSummary {
  const byStatus = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  return { jobs: 0, items: 0, errors: 0, warnings: 0, byStatus };
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function sumSizes(sizes: unknown): number | null {
  if (!sizes || typeof sizes !== 'object') return null;
  const values = Object.values(sizes as Record<string, unknown>);
  return values.every((n) => typeof n === 'number') ? (values as number[]).reduce((a, b) => a + b, 0) : null;
}

/** A skipped order, or skipped lines of one order: status `skipped`, the reason, a line per row. */
function skippedResult(
  group: SkippedRows,
  index: number,
  findings: readonly Diagnostic[] | undefined,
  file: string,
): JobResult {
  const job: JobResult = {
    index,
    orderNumber: group.orderNumber ?? null,
    status: 'skipped',
    reason: group.reason,
    source: group.rows.length > 0 ? { row: group.rows[0] } : null,
    jobNumber: null,
    dateDue: null,
    totalJobCost: null,
    estimatedCost: null,
    warnings: [],
    errors: [],
    items: group.rows.map((row, k) => ({
      index: k,
      source: { row },
      itemType: null,
      code: null,
      quantity: null,
      status: 'skipped',
      reason: group.reason,
      newAssetSku: null,
      needsArtworkToBeUploaded: null,
      errors: [],
    })),
  };
  if (findings !== undefined) fileFindings(job, findings, file);
  return job;
}
