import { JOB_STATUSES, type JobStatus } from '../report/model.js';
import { emptySummary } from '../report/build-report.js';
import { addAmount, type Amounts } from './amounts.js';

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
  lines: 5_000,
  /** Errors or warnings kept per job, line or file. */
  problems: 200,
  /**
   * Errors and warnings kept for one input's page in all: each is shown with its source line,
   * so a report of hundreds of thousands of (even empty) problems cannot make a page of hundreds
   * of megabytes.
   */
  pageProblems: 2_000,
  /** Characters of one text (a message, an order number). */
  text: 2_000,
};

/** The shapes the pages read are those the readers below build. */
export type ProblemView = ReturnType<typeof problems>[number];
export type TrackingView = NonNullable<ReturnType<typeof tracking>>;
export type LineView = ReturnType<typeof lineView>;
export type JobView = ReturnType<typeof jobView>;
export type ReportView = ReturnType<typeof reportView>;

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
/** A currency code as ISO 4217 writes them; anything else is not shown as one. */
const currencyCode = (v: unknown): string | null => (typeof v === 'string' && /^[A-Z]{3}$/.test(v) ? v : null);
const positive = (v: unknown): number | null => {
  const n = num(v);
  return n !== null && Number.isInteger(n) && n > 0 ? n : null;
};

/** What is left of a page's problems (VIEW_LIMITS.pageProblems), and how many were left out. */
interface Budget {
  left: number;
  dropped: number;
}

function problems(v: unknown, budget: Budget) {
  const all = arr(v);
  const kept = all.slice(0, Math.min(VIEW_LIMITS.problems, budget.left));
  budget.left -= kept.length;
  budget.dropped += all.length - kept.length;
  return kept.filter(isObj).map((p) => {
    const src = isObj(p.source) ? p.source : {};
    return {
      code: str(p.code) ?? '',
      message: str(p.message) ?? '',
      field: str(p.field),
      // The input's own line (YAML/JSON) or row (CSV), 1-based; null when not located.
      line: positive(src.line) ?? positive(src.row),
      column: str(src.columnName) ?? (positive(src.column) === null ? null : String(src.column)),
      // Set when the location is in another file (a mapping's constant).
      file: str(src.file),
    };
  });
}

function lineOf(source: unknown): number | null {
  if (!isObj(source) || source.file !== undefined) return null;
  return positive(source.line) ?? positive(source.row);
}

function tracking(v: unknown) {
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

function lineView(it: Obj, k: number, jobStatus: string, budget: Budget) {
  return {
    index: num(it.index) ?? k,
    line: lineOf(it.source),
    itemType: str(it.itemType),
    code: str(it.code),
    quantity: num(it.quantity),
    status: str(it.status) ?? jobStatus,
    newAssetSku: str(it.newAssetSku),
    needsArtwork: bool(it.needsArtworkToBeUploaded),
    errors: problems(it.errors, budget),
  };
}

/** One job, with the `shown` part of its items (VIEW_LIMITS). */
function jobView(j: Obj, i: number, status: string, shown: unknown[], budget: Budget) {
  return {
    index: num(j.index) ?? i,
    orderNumber: str(j.orderNumber),
    status,
    line: lineOf(j.source),
    jobNumber: num(j.jobNumber),
    dateDue: str(j.dateDue),
    totalJobCost: num(j.totalJobCost),
    estimatedCost: num(j.estimatedCost),
    /** The currency of both costs, when the report recorded it. */
    currency: currencyCode(j.currency),
    warnings: problems(j.warnings, budget),
    errors: problems(j.errors, budget),
    lines: shown.filter(isObj).map((it, k) => lineView(it, k, status, budget)),
    tracking: tracking(j.tracking),
  };
}

/** The view of a parsed result.json (any JSON value). */
export function reportView(doc: unknown) {
  const d = isObj(doc) ? doc : {};
  const summary = isObj(d.summary) ? d.summary : {};
  const input = isObj(d.input) ? d.input : {};
  const rawJobs = arr(d.jobs);
  const byStatus = emptySummary().byStatus;
  const budget: Budget = { left: VIEW_LIMITS.pageProblems, dropped: 0 };
  // The whole file's problems first: they are shown at the top of the page.
  const topErrors = problems(d.errors, budget);
  const topWarnings = problems(d.warnings, budget);
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
    jobs.push(jobView(j, i, status, shown, budget));
  }
  const count = (v: unknown, fallback: number): number => {
    const n = num(v);
    return n !== null && n >= 0 ? n : fallback;
  };
  return {
    command: str(d.command),
    /** Checked or planned only: nothing of it went to the API as an order. */
    planned: d.command === 'check' || d.command === 'plan',
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
    /** Problems of the report not kept for the page (past VIEW_LIMITS). */
    problemsLeftOut: budget.dropped,
  };
}

/** Reasons kept per report for the list: the first few say why; the input's page shows them all. */
const LISTED_REASONS = 3;

/**
 * What of a report waits for approval: how many jobs are `awaiting-approval`, their estimate
 * per currency, and the first reasons (a held job's errors are its reasons, docs/reports.md),
 * each after its order number, with how many more there are. Null when no job waits.
 */
export function awaitingApproval(view: ReportView) {
  const jobs = view.byStatus['awaiting-approval'];
  if (jobs === 0) return null;
  const amount: Amounts = new Map();
  const reasons: string[] = [];
  let more = 0;
  for (const j of view.jobs) {
    if (j.status !== 'awaiting-approval') continue;
    addAmount(amount, j.currency, j.estimatedCost);
    for (const e of j.errors) {
      if (reasons.length >= LISTED_REASONS) {
        more += 1;
        continue;
      }
      // The list says once that these wait for approval and how to give it.
      const why = e.message.replace(/^awaiting approval: /, '').replace(/ \(htorder approve\)$/, '');
      reasons.push(`${j.orderNumber ?? '(no order number)'}: ${why}`);
    }
  }
  return { jobs, amount, reasons, more };
}

export type AwaitingView = NonNullable<ReturnType<typeof awaitingApproval>>;

/** The estimates of one report's jobs, per currency: what the list shows. */
export function estimates(view: ReportView): Amounts {
  const estimated: Amounts = new Map();
  for (const j of view.jobs) addAmount(estimated, j.currency, j.estimatedCost);
  return estimated;
}
