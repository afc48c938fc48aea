import { itemCountOf, itemRowOf, jobCountOf } from '../manifest/csv/item-rows.js';
import type { CsvOrigin, JobList, Manifest } from '../manifest/model.js';
import { INPUT_TOO_LARGE } from '../manifest/read-input.js';
import { type ItemOutcome, itemOutcomes } from './lazy-items.js';
import type { JobResult, ReportError, ResultReport } from './model.js';

/**
 * The result columns of result.csv for every row of a CSV or spreadsheet input. Each row points
 * at one of a few distinct "tails" — `_status, _jobNumber, _newAssetSku, _needsArtwork, _error` —
 * since most rows share theirs (`valid,,,,`): one Int32Array of row → tail rather than an array
 * per row, which peak RSS in `npm run bench:check` shows. `_row` is the row's own number.
 */
export interface RowCellsTable {
  /** Row → tail of an item row (≥ 0), or -1: the row is not an item (rows past the end are not either). */
  itemTail: Int32Array<ArrayBuffer>;
  /** Tails of rows that are not items but have something to say (skipped by a mapping, their own errors). */
  otherTail: Map<number, number>;
  /** Tail of any other row that is not an item. */
  plainTail: number;
  /** The distinct tails, five cells each. */
  tails: string[][];
  /** The input was refused for its size: it is not read again. */
  tooLarge: boolean;
}

export class RowCells {
  /** Each tail as result.csv's text (`,valid,,,,`), made on first use. */
  private readonly texts: (string | undefined)[];

  /** `encode`: cells as one row of result.csv's text (neutralised, quoted, no line break). */
  constructor(
    readonly table: RowCellsTable,
    private readonly delimiter: string,
    private readonly encode: (cells: readonly string[]) => string,
  ) {
    this.texts = new Array<string | undefined>(table.tails.length);
  }

  /** `_row, _status, _jobNumber, _newAssetSku, _needsArtwork, _error` of the input row. */
  cells(row: number): string[] {
    return [String(row), ...this.table.tails[this.tailOf(row)]];
  }

  /** The row's cells but `_row`, as result.csv's text, each cell after a delimiter; made once per distinct tail. */
  tailText(row: number): string {
    const t = this.tailOf(row);
    let text = this.texts[t];
    if (text === undefined) {
      text = this.delimiter + this.encode(this.table.tails[t]);
      this.texts[t] = text;
    }
    return text;
  }

  private tailOf(row: number): number {
    const t = row < this.table.itemTail.length ? this.table.itemTail[row] : -1;
    return t >= 0 ? t : (this.table.otherTail.get(row) ?? this.table.plainTail);
  }
}

/**
 * Distinct tails, shared rather than interned by their text: every row of a job whose items are
 * not built shows the same outcome (its items' shared stand-in), and rows with nothing but a
 * status share one per status. Any other row (its own errors, a built item) gets a tail of its
 * own: as many as the report holds such outcomes already.
 */
class Tails {
  readonly list: string[][] = [];
  private readonly byStatus = new Map<string, number>();
  private lastJob: JobResult | undefined;
  private lastOutcome: ItemOutcome | undefined;
  private lastId = -1;

  constructor(private readonly rowErrors: ReadonlyMap<number, string[]>) {}

  add(cells: string[]): number {
    return this.list.push(cells) - 1;
  }

  /** The tail of item row `row`, showing `item` of `job`. */
  of(job: JobResult | undefined, item: ItemOutcome | undefined, row: number): number {
    const own = this.rowErrors.size === 0 ? undefined : this.rowErrors.get(row);
    if (own !== undefined) return this.add(itemTailCells(job, item, own));
    if (item !== undefined && item === this.lastOutcome && job === this.lastJob) return this.lastId;
    let id: number | undefined;
    if (job !== undefined && item !== undefined && onlyStatus(job, item)) {
      id = this.byStatus.get(item.status);
      if (id === undefined) {
        id = this.add(itemTailCells(job, item, []));
        this.byStatus.set(item.status, id);
      }
    } else id = this.add(itemTailCells(job, item, []));
    this.lastJob = job;
    this.lastOutcome = item;
    this.lastId = id;
    return id;
  }
}

/** The result columns of every row, from the report and where the manifest found each item. */
export function rowCellsOf(report: ResultReport, manifest: Manifest<JobList> | undefined): RowCellsTable {
  const csv = manifest?.csv;
  const rowErrors = errorsByRow(report.errors);
  const tails = new Tails(rowErrors);
  const itemTail = new Int32Array(lastItemRow(csv) + 1).fill(-1);
  if (csv !== undefined) {
    fillItemRows(csv, report, tails, itemTail);
    fillMergedRows(csv, report, tails, itemTail);
  }
  const isItem = (row: number) => row < itemTail.length && itemTail[row] >= 0;
  // Rows a mapping's skip rules left out: status skipped, the reason in _error.
  const otherTail = new Map<number, number>();
  const skipped = skippedRows(report, manifest?.jobs.length ?? 0);
  for (const [row, reason] of skipped) if (!isItem(row)) otherTail.set(row, tails.add(['skipped', '', '', '', reason]));
  for (const [row, own] of rowErrors)
    if (!isItem(row) && !skipped.has(row)) otherTail.set(row, tails.add(['invalid', '', '', '', own.join('; ')]));
  return {
    itemTail,
    otherTail,
    plainTail: tails.add([report.errors.length > 0 ? 'invalid' : '', '', '', '', '']),
    tails: tails.list,
    tooLarge: report.errors.some((e) => e.code === INPUT_TOO_LARGE),
  };
}

/** Each item row's tail, job by job (read through item-rows.ts: check never makes the per-job row arrays). */
function fillItemRows(csv: CsvOrigin, report: ResultReport, tails: Tails, itemTail: Int32Array): void {
  for (let j = 0, jobs = jobCountOf(csv); j < jobs; j++) {
    const job: JobResult | undefined = report.jobs[j];
    const outcome = job === undefined ? () => undefined : itemOutcomes(job);
    for (let k = 0, n = itemCountOf(csv, j); k < n; k++) {
      const row = itemRowOf(csv, j, k) as number;
      itemTail[row] = tails.of(job, outcome(k), row);
    }
  }
}

/** The highest row that shows an item's outcome (merged rows included). */
function lastItemRow(csv: CsvOrigin | undefined): number {
  let max = 0;
  if (csv === undefined) return max;
  for (let j = 0, jobs = jobCountOf(csv); j < jobs; j++)
    for (let k = 0, n = itemCountOf(csv, j); k < n; k++) max = Math.max(max, itemRowOf(csv, j, k) as number);
  for (const [r] of csv.mergedRows ?? []) max = Math.max(max, r);
  return max;
}

/**
 * A row merged into another line of its order shows that line's outcome: the (job, item) of the
 * row it was merged into, as the merges are applied in turn.
 */
function fillMergedRows(csv: CsvOrigin, report: ResultReport, tails: Tails, itemTail: Int32Array): void {
  const merged = csv.mergedRows ?? [];
  if (merged.length === 0) return;
  const into = new Set(merged.map(([, i]) => i));
  const jobItemOf = new Map<number, readonly [number, number]>();
  for (let j = 0, jobs = jobCountOf(csv); j < jobs; j++) {
    for (let k = 0, n = itemCountOf(csv, j); k < n; k++) {
      const row = itemRowOf(csv, j, k) as number;
      if (into.has(row)) jobItemOf.set(row, [j, k]);
    }
  }
  for (const [r, i] of merged) {
    const jk = jobItemOf.get(i);
    if (into.has(r)) jobItemOf.set(r, jk ?? [-1, -1]);
    if (jk === undefined || jk[0] < 0) itemTail[r] = -1;
    else {
      const job: JobResult | undefined = report.jobs[jk[0]];
      itemTail[r] = tails.of(job, job && itemOutcomes(job)(jk[1]), r);
    }
  }
}

/**
 * Rows a mapping's skip rules left out, with the reason: from the jobs after the manifest's
 * `jobs` (buildReport puts them there), so the manifest's own jobs are not read for it.
 */
function skippedRows(report: ResultReport, from: number): Map<number, string> {
  const skipped = new Map<number, string>();
  for (let j = from; j < report.jobs.length; j++) {
    const job = report.jobs[j];
    if (job.status !== 'skipped') continue;
    for (const item of job.items)
      if (item.source && 'row' in item.source) skipped.set(item.source.row, job.reason ?? '');
  }
  return skipped;
}

/** The file-level errors located at a row, by row. */
function errorsByRow(errors: readonly ReportError[]): Map<number, string[]> {
  const byRow = new Map<number, string[]>();
  for (const e of errors) {
    if (e.source && 'row' in e.source) {
      const list = byRow.get(e.source.row) ?? [];
      list.push(errorText(e));
      byRow.set(e.source.row, list);
    }
  }
  return byRow;
}

/** Whether an item row shows its item's status and nothing else. */
function onlyStatus(job: JobResult, item: ItemOutcome): boolean {
  return (
    job.jobNumber === null &&
    job.errors.length === 0 &&
    item.errors.length === 0 &&
    (item.newAssetSku ?? '') === '' &&
    item.needsArtworkToBeUploaded === null
  );
}

/** `_status, _jobNumber, _newAssetSku, _needsArtwork, _error` of an item row. */
function itemTailCells(job: JobResult | undefined, item: ItemOutcome | undefined, own: string[]): string[] {
  const errors =
    own.length === 0 && (job?.errors.length ?? 0) === 0 && (item?.errors.length ?? 0) === 0
      ? ''
      : [...own, ...(job?.errors ?? []).map(errorText), ...(item?.errors ?? []).map(errorText)].join('; ');
  return [
    item?.status ?? job?.status ?? '',
    num(job?.jobNumber ?? null),
    item?.newAssetSku ?? '',
    bool(item?.needsArtworkToBeUploaded ?? null),
    errors,
  ];
}

/** An error as result.csv shows it: `column: message` (or `field: message`). */
export function errorText(e: ReportError): string {
  const s = e.source;
  const where = s && 'row' in s ? (s.columnName ?? e.field) : e.field;
  return where ? `${where}: ${e.message}` : e.message;
}

export function num(n: number | null): string {
  return n === null ? '' : String(n);
}

export function bool(b: boolean | null): string {
  return b === null ? '' : b ? 'true' : 'false';
}
