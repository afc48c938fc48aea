import { ExitCode } from '../core/errors.js';
import type { InputOutcome } from '../pipeline/process-input.js';
import { builtItems } from '../report/lazy-items.js';
import type { JobResult, ResultReport } from '../report/model.js';
import { errorLines } from '../report/write-errors-txt.js';
import type { WrittenReports } from '../report/write-reports.js';

/** What every command knows of one input. */
export interface Outcome {
  file: string;
  status: string;
  /** Why it could not be read or processed. */
  problem?: string;
  /** Absent for an input that could not be read. */
  report?: ResultReport;
  reports?: WrittenReports;
}

/** File-level findings that say the mapping does not fit the file. */
const MAPPING_CODES: ReadonlySet<string> = new Set(['mapping.unknown-column']);

/** The exit code of a command over its inputs, the worst one's (docs/commands.md#exit-codes). */
export function exitCodeOf(outcomes: readonly Pick<Outcome, 'status' | 'report'>[]): ExitCode {
  if (outcomes.some((o) => o.status === 'unreadable')) return ExitCode.Usage;
  // A mapping naming a column the export lacks is a configuration error: reports are written,
  // and the exit code says the mapping (or the file given to it) is the wrong one.
  if (outcomes.some((o) => o.report?.errors.some((e) => MAPPING_CODES.has(e.code)))) return ExitCode.Usage;
  if (outcomes.some((o) => o.status === 'unavailable')) return ExitCode.Unavailable;
  if (outcomes.some((o) => o.status === 'invalid')) return ExitCode.Invalid;
  if (outcomes.some((o) => o.status === 'held')) return ExitCode.AwaitingApproval;
  return ExitCode.Ok;
}

/** The one JSON line of `--json`, as an object (jsonSummary). */
export interface JsonSummary {
  command: string;
  exitCode: number;
  inputs: object[];
  skipped?: readonly string[];
}

/**
 * The one JSON line of `--json` (docs/commands.md): the command, its exit code and, per input,
 * its file, status and problem, plus what the command tells of an input it could read; and the
 * reports given as inputs and left out, if any.
 */
export function jsonSummary<O extends Outcome>(
  command: string,
  outcomes: readonly O[],
  exitCode: number,
  details: (report: ResultReport, o: O) => object,
  /** Files given that were left out as htorder's own reports (report-inputs.ts). */
  skipped: readonly string[] = [],
): JsonSummary {
  return {
    command,
    exitCode,
    inputs: outcomes.map((o) => ({
      file: o.file,
      status: o.status,
      ...(o.problem ? { problem: o.problem } : {}),
      ...(o.report ? details(o.report, o) : {}),
    })),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

/** `plan` and `run`: the report's summary, the reports written and each job's outcome. */
export function pipelineDetails(report: ResultReport, o: InputOutcome): object {
  return { ...pipelineHead(report, o), jobs: report.jobs.map(pipelineJob) };
}

/** pipelineDetails with an empty list of jobs, where a JsonJobRows fills them in (json-job-rows.ts). */
export function pipelineHead(report: ResultReport, o: InputOutcome): { summary: object; reports: unknown; jobs: [] } {
  return { summary: report.summary, reports: o.reports, jobs: [] };
}

/** One job's outcome in pipelineDetails. */
export function pipelineJob(j: JobResult): object {
  return {
    orderNumber: j.orderNumber,
    status: j.status,
    jobNumber: j.jobNumber,
    dateDue: j.dateDue,
    estimatedCost: j.estimatedCost,
    totalJobCost: j.totalJobCost,
    errors: j.errors.length + builtItems(j).reduce((n, i) => n + i.errors.length, 0),
    warnings: j.warnings.length,
  };
}

/** How many of an input's errors `check --json` quotes (checkDetails' firstErrors). */
export const FIRST_ERRORS = 20;

/** `check`: the input's format and hash, the counts, the reports written and the first FIRST_ERRORS errors. */
export function checkDetails(report: ResultReport, o: Outcome): object {
  return {
    format: report.input.format,
    sha256: report.input.sha256,
    jobs: {
      total: report.summary.jobs,
      valid: report.summary.byStatus.valid,
      invalid: report.summary.byStatus.invalid,
    },
    items: report.summary.items,
    errors: report.summary.errors,
    warnings: report.summary.warnings,
    reports: o.reports,
    firstErrors: first(errorLines(report, report.input.file), FIRST_ERRORS),
  };
}

/** The first `n` of a sequence, without walking the rest. */
export function first<T>(it: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  if (n <= 0) return out;
  for (const x of it) if (out.push(x) === n) break;
  return out;
}
