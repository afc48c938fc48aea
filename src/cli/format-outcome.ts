import type { InputOutcome, PipelineCommand } from '../pipeline/process-input.js';
import type { JobResult, ResultReport } from '../report/model.js';
import { itemCount } from '../report/lazy-items.js';
import { errorLines, warningLines } from '../report/write-errors-txt.js';
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
  const rows: string[][] = [['order', 'items', 'estimate', 'status', command === 'run' ? 'job' : 'due']];
  let total = 0;
  let priced = true;
  // Jobs this command orders (or would): an already-submitted job is not ordered again and a
  // skipped one never was, so neither makes the total "unpriced".
  let ordering = 0;
  // A skipped group whose order is also read as an order is lines of it (a fee, a line without a
  // SKU), not the order: the table says so, so that it does not read as a skipped order. Only an
  // input with skipped rows needs the orders read.
  const ordered =
    r.summary.byStatus.skipped > 0
      ? new Set(r.jobs.filter((j) => j.status !== 'skipped').map((j) => j.orderNumber))
      : new Set<string | null>();
  for (const job of r.jobs) {
    const estimate = job.estimatedCost;
    const orders = job.status !== 'skipped' && job.status !== 'already-submitted';
    if (orders) ordering += 1;
    if (estimate !== null) total += estimate;
    else if (orders) priced = false;
    if (rows.length <= SHOWN_JOBS) rows.push(jobRow(job, ordered, command));
  }
  const lines = [`${printable(o.file)}:`];
  if (r.mapping) lines.push(`  ${recognisedText(r.mapping)}`);
  lines.push(...table(rows).map((l) => `  ${l}`));
  const more = r.jobs.length - (rows.length - 1);
  if (more > 0)
    lines.push(
      `  ... and ${more} more job${more === 1 ? '' : 's'}: every job is in ${o.reports?.csv ?? 'the reports'}`,
    );
  // The account's currency, as the estimates give it (none when nothing was resolved).
  const currency = o.currency;
  if (r.jobs.length > 0)
    lines.push(
      `  estimated total: ${amountText(total, currency && printable(currency))}${
        ordering === 0 ? ' (nothing new to order)' : priced ? '' : ' (some lines could not be priced)'
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
  let shown = 0;
  for (const line of messages(r)) {
    if (shown++ === SHOWN_ERRORS) {
      lines.push(`  ... more in ${o.reports?.errors ?? o.reports?.json ?? 'the reports'}`);
      break;
    }
    lines.push(`  ${line}`);
  }
  const written = [o.reports?.json, o.reports?.csv, o.reports?.errors].filter(Boolean).join(', ');
  if (written) lines.push(`  reports: ${written}`);
  // Every part above is escaped already; once more over the whole, for anything added later.
  return printableLines(`${lines.join('\n')}\n`);
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

/** Errors first, then warnings, with the path as the user typed it (clickable in a terminal). */
function* messages(r: ResultReport): Generator<string> {
  yield* errorLines(r, r.input.file);
  yield* warningLines(r, r.input.file);
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
