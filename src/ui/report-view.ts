import { JOB_STATUSES, type JobStatus } from '../report/model.js';
import { emptySummary } from '../report/build-report.js';

/**
 * What the dashboard shows of one X.result.json, read tolerantly: the file is the user's (any
 * program, an older htorder, a hand edit or a hostile drop may have written it), so every
 * field is taken only when it has the expected type, and lists and texts are cut at limits that
 * keep one page small. Nothing here throws on a strange report; a report that is not JSON at
 * all is a `problem` (readReport in drop-inputs.ts).
 */

export const VIEW_LIMITS = {
  /** Jobs, and lines of all jobs together, shown for one input; more are counted, not shown. */
  jobs: 5_000,
  lines: 20_000,
  /** Errors or warnings kept per job, line or file. */
  problems: 200,
  /** Characters of one text (a message, an order number). */
  text: 2_000,
};

export interface ProblemView {
  code: string;
  message: string;
  field: string | null;
  /** The input's own line (YAML/JSON) or row (CSV), 1-based; null when not located. */
  line: number | null;
  column: string | null;
  /** Set when the location is in another file (a mapping's constant). */
  file: string | null;
}

export interface LineView {
  index: number;
  line: number | null;
  itemType: string | null;
  code: string | null;
  quantity: number | null;
  status: string;
  newAssetSku: string | null;
  needsArtwork: boolean | null;
  errors: ProblemView[];
}

export interface TrackingView {
  checkedAt: string | null;
  status: string | null;
  dateDue: string | null;
  dateOut: string | null;
  shippedDaysToProcess: number | null;
  shippedDateStatus: string | null;
  tracking: { number: string | null; link: string | null }[];
  invoiceNumber: string | null;
  invoiceAvailable: boolean;
  problem: string | null;
}

export interface JobView {
  index: number;
  orderNumber: string | null;
  status: string;
  line: number | null;
  jobNumber: number | null;
  dateDue: string | null;
  totalJobCost: number | null;
  estimatedCost: number | null;
  warnings: ProblemView[];
  errors: ProblemView[];
  lines: LineView[];
  tracking: TrackingView | null;
}

export interface ReportView {
  command: string | null;
  format: string | null;
  startedAt: number | null;
  finishedAt: number | null;
  byStatus: Record<JobStatus, number>;
  jobCount: number;
  lineCount: number;
  errorCount: number;
  warningCount: number;
  errors: ProblemView[];
  warnings: ProblemView[];
  jobs: JobView[];
  /** Jobs or lines past VIEW_LIMITS, left out of `jobs`. */
  cut: boolean;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const str = (v: unknown): string | null =>
  typeof v === 'string' ? (v.length > VIEW_LIMITS.text ? `${v.slice(0, VIEW_LIMITS.text)}…` : v) : null;
const time = (v: unknown): number | null => {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
};
const positive = (v: unknown): number | null => {
  const n = num(v);
  return n !== null && Number.isInteger(n) && n > 0 ? n : null;
};

function problems(v: unknown): ProblemView[] {
  return arr(v)
    .slice(0, VIEW_LIMITS.problems)
    .filter(isObj)
    .map((p) => {
      const src = isObj(p.source) ? p.source : {};
      return {
        code: str(p.code) ?? '',
        message: str(p.message) ?? '',
        field: str(p.field),
        line: positive(src.line) ?? positive(src.row),
        column: str(src.columnName) ?? (positive(src.column) === null ? null : String(src.column)),
        file: str(src.file),
      };
    });
}

function lineOf(source: unknown): number | null {
  if (!isObj(source) || source.file !== undefined) return null;
  return positive(source.line) ?? positive(source.row);
}

function tracking(v: unknown): TrackingView | null {
  if (!isObj(v)) return null;
  return {
    checkedAt: str(v.checkedAt),
    status: str(v.status),
    dateDue: str(v.dateDue),
    dateOut: str(v.dateOut),
    shippedDaysToProcess: num(v.shippedDaysToProcess),
    shippedDateStatus: str(v.shippedDateStatus),
    tracking: arr(v.tracking)
      .slice(0, 20)
      .filter(isObj)
      .map((t) => ({ number: str(t.trackingNumber), link: str(t.trackingLink) })),
    invoiceNumber: str(v.invoiceNumber),
    // The link is signed: whether there is one is shown, never the link.
    invoiceAvailable: isObj(v.invoiceFile) && typeof v.invoiceFile.uri === 'string',
    problem: str(v.problem),
  };
}

/** The view of a parsed result.json (any JSON value). */
export function reportView(doc: unknown): ReportView {
  const d = isObj(doc) ? doc : {};
  const summary = isObj(d.summary) ? d.summary : {};
  const input = isObj(d.input) ? d.input : {};
  const rawJobs = arr(d.jobs);
  const byStatus = emptySummary().byStatus;
  const jobs: JobView[] = [];
  let lines = 0;
  let lineCount = 0;
  let cut = false;
  for (const [i, j] of rawJobs.entries()) {
    if (!isObj(j)) continue;
    const status = str(j.status) ?? 'unknown';
    if ((JOB_STATUSES as readonly string[]).includes(status)) byStatus[status as JobStatus] += 1;
    const items = arr(j.items);
    lineCount += items.length;
    if (jobs.length >= VIEW_LIMITS.jobs || lines >= VIEW_LIMITS.lines) {
      cut = true;
      continue;
    }
    const shown = items.slice(0, VIEW_LIMITS.lines - lines);
    if (shown.length < items.length) cut = true;
    lines += shown.length;
    jobs.push({
      index: num(j.index) ?? i,
      orderNumber: str(j.orderNumber),
      status,
      line: lineOf(j.source),
      jobNumber: num(j.jobNumber),
      dateDue: str(j.dateDue),
      totalJobCost: num(j.totalJobCost),
      estimatedCost: num(j.estimatedCost),
      warnings: problems(j.warnings),
      errors: problems(j.errors),
      lines: shown.filter(isObj).map((it, k) => ({
        index: num(it.index) ?? k,
        line: lineOf(it.source),
        itemType: str(it.itemType),
        code: str(it.code),
        quantity: num(it.quantity),
        status: str(it.status) ?? status,
        newAssetSku: str(it.newAssetSku),
        needsArtwork: bool(it.needsArtworkToBeUploaded),
        errors: problems(it.errors),
      })),
      tracking: tracking(j.tracking),
    });
  }
  const count = (v: unknown, fallback: number): number => {
    const n = num(v);
    return n !== null && n >= 0 ? n : fallback;
  };
  const topErrors = problems(d.errors);
  const topWarnings = problems(d.warnings);
  return {
    command: str(d.command),
    format: str(input.format),
    startedAt: time(d.startedAt),
    finishedAt: time(d.finishedAt),
    byStatus,
    jobCount: rawJobs.length,
    lineCount,
    errorCount: count(summary.errors, topErrors.length),
    warningCount: count(summary.warnings, topWarnings.length),
    errors: topErrors,
    warnings: topWarnings,
    jobs,
    cut,
  };
}

/** Sums of one report's jobs: what the list and the day's picture show. */
export function costs(view: ReportView): { estimated: number | null; actual: number | null } {
  let estimated: number | null = null;
  let actual: number | null = null;
  for (const j of view.jobs) {
    if (j.estimatedCost !== null) estimated = (estimated ?? 0) + j.estimatedCost;
    if (j.totalJobCost !== null) actual = (actual ?? 0) + j.totalJobCost;
  }
  return { estimated, actual };
}
