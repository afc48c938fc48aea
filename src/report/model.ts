/**
 * The result report (docs/reports.md), the shape of `X.result.json` and the model every
 * command fills in: `check` writes statuses valid/invalid; the pipeline later sets job
 * numbers and costs and writes the report again after every job outcome.
 * schemas/report.schema.json describes the same shape for other tools.
 */

import type { JobTracking } from './tracking-model.js';

export const JOB_STATUSES = [
  'valid',
  'invalid',
  'submitted',
  'already-submitted',
  'failed',
  'not-submitted',
  'in-doubt',
  'skipped',
] as const;

export type JobStatus = (typeof JOB_STATUSES)[number];

export type ReportCommand = 'check' | 'plan' | 'run' | 'watch';

/**
 * YAML/JSON: line and column. CSV: the row in the original file and the column's own header.
 * All 1-based. `file` only when the location is in another file than the input (a value
 * that came from an ERP mapping's constant).
 */
export type ReportSource = ({ line: number; column: number } | { row: number; columnName?: string }) & {
  file?: string;
};

export interface ReportError {
  code: string;
  message: string;
  field: string | null;
  source: ReportSource | null;
}

export interface ItemResult {
  index: number;
  source: ReportSource | null;
  itemType: string | null;
  code: string | null;
  quantity: number | null;
  status: JobStatus;
  /** `skipped` only: why the mapping's skip rule left the line out. */
  reason?: string;
  newAssetSku: string | null;
  needsArtworkToBeUploaded: boolean | null;
  errors: ReportError[];
}

export interface JobResult {
  index: number;
  orderNumber: string | null;
  status: JobStatus;
  /** `skipped` only: why the mapping's skip rule left the order (or these lines) out. */
  reason?: string;
  source: ReportSource | null;
  jobNumber: number | null;
  dateDue: string | null;
  totalJobCost: number | null;
  estimatedCost: number | null;
  /**
   * The account's currency code (ISO 4217, from its profile) that `totalJobCost` and
   * `estimatedCost` are in; absent when the run did not read the profile (a job the ledger
   * already vouched for, an older report).
   */
  currency?: string;
  /**
   * Read-only: a job without any is given one shared, frozen empty array (build-report.ts), so
   * a finding is added by assigning a new array, never by pushing (the type says so).
   */
  warnings: readonly ReportError[];
  /** Job-level errors; an item's own errors are on the item. Read-only like `warnings`. */
  errors: readonly ReportError[];
  items: ItemResult[];
  /** Written by `htorder track`: the job's state after submission (tracking-model.ts). */
  tracking?: JobTracking;
}

export interface ReportSummary {
  jobs: number;
  items: number;
  errors: number;
  warnings: number;
  byStatus: Record<JobStatus, number>;
  /** New-print lines the API answered with needsArtworkToBeUploaded: the job waits for their artwork. */
  artworkNeeded?: number;
}

export interface ResultReport {
  reportVersion: 1;
  command: ReportCommand;
  htorderVersion: string;
  input: { file: string; sha256: string | null; format: 'yaml' | 'json' | 'csv' | 'xlsx' | null };
  startedAt: string;
  finishedAt: string | null;
  summary: ReportSummary;
  /** File-level problems: parse errors, `version`, `defaults`, anything not tied to one job. */
  errors: ReportError[];
  warnings: ReportError[];
  jobs: JobResult[];
}
