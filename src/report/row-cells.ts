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
}

/** result.csv's result columns of an input row, as cells or as text. */
export interface RowResults {
  /** `_row, _status, _jobNumber, _newAssetSku, _needsArtwork, _error` of the input row. */
  cells(row: number): string[];
  /** The row's cells but `_row`, as result.csv's text, each cell after a delimiter. */
  tailText(row: number): string;
}

export class RowCells implements RowResults {
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
  const otherTail = new Map<number, number>();
  const isItem = (row: number) => row < itemTail.length && itemTail[row] >= 0;
  for (const [row, cells] of otherRows(report, manifest?.jobs.length ?? 0, rowErrors, isItem))
    otherTail.set(row, tails.add(cells));
  return {
    itemTail,
    otherTail,
    plainTail: tails.add(plainCells(report)),
    tails: tails.list,
  };
}

/**
 * The tails of rows that are not items but have something to say: rows a mapping's skip rules
 * left out (status skipped, the reason in _error), and rows with errors of their own.
 */
function otherRows(
  report: ResultReport,
  manifestJobs: number,
  rowErrors: ReadonlyMap<number, string[]>,
  isItem: (row: number) => boolean,
): Map<number, string[]> {
  const other = new Map<number, string[]>();
  const skipped = skippedRows(report, manifestJobs);
  for (const [row, reason] of skipped) if (!isItem(row)) other.set(row, ['skipped', '', '', '', reason]);
  for (const [row, own] of rowErrors)
    if (!isItem(row) && !skipped.has(row)) other.set(row, ['invalid', '', '', '', own.join('; ')]);
  return other;
}

/** The tail of any other row that is not an item. */
function plainCells(report: ResultReport): string[] {
  return [report.errors.length > 0 ? 'invalid' : '', '', '', '', ''];
}

/** Whether the input was refused for its size (it is not read again). */
export function isTooLarge(report: Pick<ResultReport, 'errors'>): boolean {
  return report.errors.some((e) => e.code === INPUT_TOO_LARGE);
}

/**
 * The result columns of every row made as each row is written, from the jobs as one instant
 * showed them (`jobAt`), one job read at a time: what a run's report writes, whose ended jobs
 * are on disk (a spooled report). Nothing is held per job; per row, the job it shows (4 bytes).
 * The same cells as RowCells of rowCellsOf's table, which check hands to a worker thread.
 */
export class RowsOnDemand implements RowResults {
  /** Row → the job whose item it shows; -1: not an item; -2: a merged row (`merged`). */
  private readonly rowJob: Int32Array;
  private readonly merged: Map<number, readonly [number, number]>;
  private readonly rowErrors: Map<number, string[]>;
  private readonly other: Map<number, string[]>;
  private readonly plain: string[];
  private readonly texts = new Map<string[], string>();
  /** The job read last, and its items' outcomes. */
  private job = -1;
  private result: JobResult | undefined;
  private outcome: (k: number) => ItemOutcome | undefined = () => undefined;
  /** The cells made last and their text: rows of one job mostly show the same. */
  private lastCells: string[] | undefined;
  private lastText = '';

  constructor(
    report: ResultReport,
    private readonly csv: CsvOrigin | undefined,
    private readonly jobAt: (j: number) => JobResult | undefined,
    private readonly delimiter: string,
    private readonly encode: (cells: readonly string[]) => string,
    manifestJobs: number,
  ) {
    this.rowErrors = errorsByRow(report.errors);
    this.rowJob = new Int32Array(lastItemRow(csv) + 1).fill(-1);
    this.merged = new Map();
    if (csv !== undefined) {
      for (let j = 0, jobs = jobCountOf(csv); j < jobs; j++)
        for (let k = 0, n = itemCountOf(csv, j); k < n; k++) this.rowJob[itemRowOf(csv, j, k) as number] = j;
      for (const [r, jk] of mergedTargets(csv)) {
        this.rowJob[r] = jk === undefined ? -1 : -2;
        if (jk !== undefined) this.merged.set(r, jk);
      }
    }
    const isItem = (row: number) => row < this.rowJob.length && this.rowJob[row] !== -1;
    this.other = otherRows(report, manifestJobs, this.rowErrors, isItem);
    this.plain = plainCells(report);
  }

  cells(row: number): string[] {
    return [String(row), ...this.tailOf(row)];
  }

  tailText(row: number): string {
    const cells = this.tailOf(row);
    const last = this.lastCells;
    if (last !== undefined && sameCells(last, cells)) return this.lastText;
    let text = this.texts.get(cells);
    if (text === undefined) {
      text = this.delimiter + this.encode(cells);
      if (cells === this.plain || this.other.get(row) === cells) this.texts.set(cells, text);
    }
    this.lastCells = cells;
    this.lastText = text;
    return text;
  }

  private tailOf(row: number): string[] {
    const j = row < this.rowJob.length ? this.rowJob[row] : -1;
    if (j === -1) return this.other.get(row) ?? this.plain;
    const [job, k] = j === -2 ? (this.merged.get(row) as readonly [number, number]) : [j, this.itemOf(j, row)];
    this.read(job);
    const own = this.rowErrors.size === 0 ? undefined : this.rowErrors.get(row);
    return itemTailCells(this.result, this.result && this.outcome(k), own ?? []);
  }

  private read(j: number): void {
    if (j === this.job) return;
    this.job = j;
    this.result = this.jobAt(j);
    this.outcome = this.result === undefined ? () => undefined : itemOutcomes(this.result);
  }

  /** Which of job `j`'s items is at `row`: a job's rows rise with its items, as the reader found them. */
  private itemOf(j: number, row: number): number {
    const csv = this.csv as CsvOrigin;
    let lo = 0;
    let hi = itemCountOf(csv, j) - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = itemRowOf(csv, j, mid) as number;
      if (at === row) return mid;
      if (at < row) lo = mid + 1;
      else hi = mid - 1;
    }
    // Rows given out of order (a caller's own itemRows): looked for one by one.
    for (let k = 0, n = itemCountOf(csv, j); k < n; k++) if (itemRowOf(csv, j, k) === row) return k;
    return -1;
  }
}

function sameCells(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return a.length === b.length;
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
 * row it was merged into, as the merges are applied in turn; undefined: the row shows no item.
 */
function mergedTargets(csv: CsvOrigin): Map<number, readonly [number, number] | undefined> {
  const targets = new Map<number, readonly [number, number] | undefined>();
  const merged = csv.mergedRows ?? [];
  if (merged.length === 0) return targets;
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
    targets.set(r, jk === undefined || jk[0] < 0 ? undefined : jk);
  }
  return targets;
}

function fillMergedRows(csv: CsvOrigin, report: ResultReport, tails: Tails, itemTail: Int32Array): void {
  for (const [r, jk] of mergedTargets(csv)) {
    if (jk === undefined) itemTail[r] = -1;
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
