import type { InputOutcome, PipelineCommand } from '../pipeline/process-input.js';
import type { JobResult, ResultReport } from '../report/model.js';
import { itemCount } from '../report/lazy-items.js';
import { formatReportError, jobErrors } from '../report/write-errors-txt.js';
import { glanceAt, glanceOf } from '../report/job-glance.js';
import { amountText } from '../core/money.js';
import { printable, printableLines } from '../core/printable.js';
import { aPlatform } from '../core/platform-names.js';

/** How many error lines per input the terminal shows before pointing at errors.txt. */
const SHOWN_ERRORS = 8;
/**
 * How many jobs the table shows before pointing at result.csv: a night's file of many thousand
 * orders is a report to open, not a table to scroll, and the table of every job of a big input
 * took as much memory as its jobs. The total and the counts are of every job.
 */
const SHOWN_JOBS = 50;

/** What the terminal says of an input read through a preset its header was recognised as. */
export function recognisedText(m: { preset: string; matchedColumns: readonly string[] }): string {
  return `read as ${aPlatform(m.preset)} export (--mapping ${m.preset}; ${m.matchedColumns.length} of its columns matched)`;
}

/**
 * The human summary of one input for `plan` and `run`: a table of its jobs (order, items,
 * estimate, status, job number), the total, the first errors and warnings compiler-style,
 * and where the reports are.
 */
export function formatInputOutcome(o: InputOutcome, command: PipelineCommand): string {
  if (!o.report)
    return printableLines(
      `${printable(o.file)}: ${printable(o.problem ?? 'cannot be read')} (not processed, no reports written)\n`,
    );
  const r = o.report;
  const d = digest(r);
  const rows = [['order', 'items', 'estimate', 'status', command === 'run' ? 'job' : 'due']];
  for (const job of d.firstJobs) rows.push(jobRow(job, d.ordered, command));
  const lines = [`${printable(o.file)}:`];
  if (r.mapping) lines.push(`  ${recognisedText(r.mapping)}`);
  lines.push(...table(rows).map((l) => `  ${l}`));
  const more = d.jobs - d.firstJobs.length;
  if (more > 0)
    lines.push(
      `  ... and ${more} more job${more === 1 ? '' : 's'}: every job is in ${printable(o.reports?.csv ?? 'the reports')}`,
    );
  // The account's currency, as the estimates give it (none when nothing was resolved).
  const currency = o.currency;
  if (d.jobs > 0)
    lines.push(
      `  estimated total: ${amountText(d.total, currency && printable(currency))}${
        d.ordering === 0 ? ' (nothing new to order)' : d.priced ? '' : ' (some lines could not be priced)'
      }`,
    );
  lines.push(`  ${summaryLine(r)}`);
  // Why the input as a whole is undecided where no job says it (the ledger's store away between jobs).
  if (o.status === 'unavailable' && o.problem !== undefined)
    lines.push(`  not finished, run it again later: ${printable(o.problem)}`);
  const owed = r.summary.artworkNeeded ?? 0;
  if (owed > 0)
    lines.push(
      `  ${owed} new-print line${owed === 1 ? '' : 's'} wait${owed === 1 ? 's' : ''} for artwork: the printer holds the job until it has it (docs/artwork.md)`,
    );
  const shown = d.messages.slice(0, SHOWN_ERRORS).map((line) => `  ${line}`);
  lines.push(...shown);
  if (d.messages.length > SHOWN_ERRORS)
    lines.push(`  ... more in ${printable(o.reports?.errors ?? o.reports?.json ?? 'the reports')}`);
  // Each name one line (a file name may hold a line feed): escaped whole, not as lines.
  const written = [o.reports?.json, o.reports?.csv, o.reports?.errors].filter((f) => f !== undefined);
  if (written.length > 0) lines.push(`  reports: ${written.map(printable).join(', ')}`);
  // Every part above is escaped already; once more over the whole, for anything added later.
  return printableLines(`${lines.join('\n')}\n`);
}

/** What the summary shows of an input's jobs, all taken in one read of them. */
interface JobsDigest {
  jobs: number;
  /** The jobs the table shows (the first SHOWN_JOBS). */
  firstJobs: JobResult[];
  /** Orders also read as an order, when some rows were skipped (statusText). */
  ordered: ReadonlySet<string | null>;
  total: number;
  priced: boolean;
  /** Jobs this command orders (or would). */
  ordering: number;
  /** The first error and warning lines, errors first, one more than is shown (to tell there are more). */
  messages: string[];
}

/**
 * One pass over the jobs, each read at most once and only when its glance (status, estimate,
 * whether it has errors or warnings) does not tell enough: a spooled report reads an ended job
 * back from disk and parses it, so a big input's summary reads the jobs it shows and those
 * whose first errors and warnings it quotes, not every job.
 */
function digest(r: ResultReport): JobsDigest {
  const ordered = new Set<string | null>();
  const d: JobsDigest = { jobs: 0, firstJobs: [], ordered, total: 0, priced: true, ordering: 0, messages: [] };
  // A skipped group whose order is also read as an order is lines of it (a fee, a line without a
  // SKU), not the order: the table says so, so that it does not read as a skipped order. Only an
  // input with skipped rows needs the orders read.
  const collectOrders = r.summary.byStatus.skipped > 0;
  const label = r.input.file;
  const wanted = SHOWN_ERRORS + 1;
  const errors = r.errors.slice(0, wanted).map((e) => formatReportError(e, label));
  const warnings: string[] = [];
  const { jobs } = r;
  for (let j = 0; j < jobs.length; j++) {
    // Each job is read only for what its glance does not tell: a spooled job is parsed once read.
    let read: JobResult | undefined;
    const job = (): JobResult => (read ??= jobs[j] as JobResult);
    const glance = glanceAt(jobs, j) ?? glanceOf(job());
    d.jobs += 1;
    const estimate = glance.estimatedCost;
    // Jobs this command orders (or would): an already-submitted job is not ordered again and a
    // skipped one never was, so neither makes the total "unpriced".
    const orders = glance.status !== 'skipped' && glance.status !== 'already-submitted';
    if (orders) d.ordering += 1;
    if (estimate !== null) d.total += estimate;
    else if (orders) d.priced = false;
    if (collectOrders && glance.status !== 'skipped') ordered.add(job().orderNumber);
    if (d.firstJobs.length < SHOWN_JOBS) d.firstJobs.push(job());
    for (const e of errors.length < wanted && glance.errors ? jobErrors(job()) : []) {
      errors.push(formatReportError(e, label));
      if (errors.length === wanted) break;
    }
    for (const w of warnings.length < wanted && glance.warnings ? job().warnings : []) {
      warnings.push(`warning: ${formatReportError(w, label)}`);
      if (warnings.length === wanted) break;
    }
  }
  const fileWarnings = r.warnings.slice(0, wanted).map((w) => `warning: ${formatReportError(w, label)}`);
  // errorLines and warningLines's order: the file's errors, the jobs', the file's warnings, the jobs'.
  d.messages = [...errors, ...fileWarnings, ...warnings].slice(0, wanted);
  return d;
}

/** One job's row of the table: order, items, estimate, status, and the job number (run) or due date (plan). */
function jobRow(job: JobResult, ordered: ReadonlySet<string | null>, command: PipelineCommand): string[] {
  const estimate = job.estimatedCost;
  return [
    // Not `#2`: that reads like a shop's order name. Where the job is, in the input's terms.
    printable(job.orderNumber ?? `(no order number, ${sourceText(job.source)})`),
    String(itemCount(job)),
    estimate === null ? '-' : money(estimate),
    statusText(job, ordered) +
      (job.warnings.length ? ` (${job.warnings.length} warning${job.warnings.length === 1 ? '' : 's'})` : ''),
    command === 'run' ? (job.jobNumber === null ? '-' : String(job.jobNumber)) : printable(job.dateDue ?? '-'),
  ];
}

/** `skipped` for an order left out; `line skipped` (`3 lines skipped`) for lines of an order that is read. */
function statusText(job: JobResult, ordered: ReadonlySet<string | null>): string {
  if (job.status !== 'skipped' || job.orderNumber === null || !ordered.has(job.orderNumber)) return job.status;
  const n = itemCount(job);
  return n === 1 ? 'line skipped' : `${n} lines skipped`;
}

function summaryLine(r: ResultReport): string {
  const counts = Object.entries(r.summary.byStatus)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`);
  return `${r.summary.jobs} job${r.summary.jobs === 1 ? '' : 's'}: ${counts.join(', ') || 'none'}`;
}

/** Columns padded to their widest cell, two spaces apart. */
function table(rows: string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, c) => rows.reduce((w, r) => Math.max(w, (r[c] ?? '').length), 0));
  return rows.map((r) =>
    r
      .map((cell, c) => cell.padEnd(widths[c] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

function money(n: number): string {
  return n.toFixed(2);
}

function sourceText(source: { row?: number; line?: number } | null): string {
  if (source === null) return 'job';
  return 'row' in source && source.row !== undefined ? `row ${source.row}` : `line ${source.line ?? 1}`;
}
