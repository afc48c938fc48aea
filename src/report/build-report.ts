import { invalidJobs, isError } from '../manifest/diagnostics.js';
import { itemRowOf } from '../manifest/csv/item-rows.js';
import { jobIfReadable } from '../manifest/csv/job-view.js';
import { itemIndexOf, jobIndexOf } from '../manifest/field-path.js';
import type { Diagnostic, JobList, Manifest, ManifestFormat, SkippedRows, SourceLocation } from '../manifest/model.js';
import { VERSION } from '../core/version.js';
import { builtItems, itemCount, itemDeferrer, itemsPending, type ItemSource } from './lazy-items.js';
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
  startedAt: Date;
  finishedAt?: Date;
}

export function buildReport(x: BuildReportInput): ResultReport {
  const file = x.input.file;
  const { all: fileLevelError, jobs: badJobs } = invalidJobs(x.diagnostics);
  const manifest = x.manifest;
  // `items`, built on first use (lazy-items.ts): check writes a million items without keeping them.
  const defer = itemDeferrer(manifestItems(manifest), manifest?.jobs.length ?? 0);
  const jobs: JobResult[] = [];
  let j = 0;
  for (const job of manifest?.jobs ?? []) {
    const status: JobStatus = fileLevelError || badJobs.has(j) ? 'invalid' : 'valid';
    const result: Omit<JobResult, 'items'> = {
      index: j,
      orderNumber: str(job.orderNumber),
      status,
      source: jobSource(manifest, j, file),
      jobNumber: null,
      dateDue: str(job.dateDue),
      totalJobCost: null,
      estimatedCost: null,
      warnings: NONE,
      errors: NONE,
    };
    jobs.push(defer(result));
    j++;
  }

  // Rows a mapping's skip rules left out: after the jobs, each with its reason; never an error.
  for (const group of manifest?.skipped ?? []) jobs.push(skippedResult(group, jobs.length));

  const report: ResultReport = {
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
    jobs,
  };

  for (const d of x.diagnostics) {
    const error = toReportError(d, file);
    const j = jobIndexOf(d.field);
    const job = j === undefined ? undefined : jobs[j];
    const ik = itemIndexOf(d.field);
    const item = ik && job ? job.items[ik[1]] : undefined;
    if (!isError(d)) append(job ?? report, 'warnings', error);
    else if (item) item.errors.push(error);
    else append(job ?? report, 'errors', error);
  }
  // Items with errors are invalid. Only jobs a diagnostic named have built items; the others'
  // pending items already carry their job's status.
  for (const job of jobs) {
    if (!itemsPending(job)) for (const item of job.items) item.status = item.errors.length > 0 ? 'invalid' : job.status;
  }
  refreshSummary(report);
  return report;
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

/** True when the report shows a failure of any kind (drives errors.txt and exit codes). */
export function reportHasErrors(report: ResultReport): boolean {
  const bad: ReadonlySet<JobStatus> = new Set<JobStatus>([
    'invalid',
    'failed',
    'in-doubt',
    'not-submitted',
    'awaiting-approval',
  ]);
  return report.summary.errors > 0 || report.jobs.some((j) => bad.has(j.status));
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
function skippedResult(group: SkippedRows, index: number): JobResult {
  return {
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
}
