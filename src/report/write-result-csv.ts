import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { stringify } from 'csv-stringify/sync';
import { itemCountOf, itemRowOf, jobCountOf } from '../manifest/csv/item-rows.js';
import type { CsvOrigin, Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import { CSV_STOPPED_CODES } from '../manifest/csv/read-csv.js';
import { type CsvLimits, INPUT_TOO_LARGE } from '../manifest/read-input.js';
import { NotVerbatim } from './csv-record-scanner.js';
import { type ItemOutcome, itemOutcomes, peekItems } from './lazy-items.js';
import type { JobResult, ReportError, ResultReport } from './model.js';
import { type NewFileOptions, writeFileAtomic } from '../storage/atomic-write.js';
import { neutraliseCell } from './neutralise.js';
import type { WorkerAnswer } from './result-csv-worker.js';
import { csvCell, RowCells, type RowCellsTable } from './row-cells.js';
import { CSV_RESULT_COLUMNS, padTo, type VerbatimCopy, writeVerbatimCsv } from './verbatim-csv.js';

/**
 * X.result.csv: one row per item. For a CSV input, the input's own cells first, verbatim,
 * then `_row,_status,_jobNumber,_newAssetSku,_needsArtwork,_error`. For YAML/JSON a fixed
 * column set. Streamed; every cell is neutralised against spreadsheet formula injection.
 *
 * The input's cells are not kept in memory: they are read again from the file. A
 * comma-separated UTF-8 input (the default template, or an export read through a mapping) has
 * each record's bytes copied as they are (csv-record-scanner.ts), re-parsing only records with
 * a cell to neutralise; an export in another dialect (delimiter, encoding, skipped lines), or
 * any file the copier cannot mirror exactly, is re-parsed whole. Both give the same cells.
 */

export const YAML_RESULT_COLUMNS = [
  'orderNumber',
  'itemIndex',
  'line',
  'itemType',
  'code',
  'quantity',
  'status',
  'jobNumber',
  'newAssetSku',
  'needsArtwork',
  'error',
] as const;

/** Rows per csv-stringify call; the text stays well under the size V8 allocates straight into the old generation. */
const BATCH_ROWS = 200;
/**
 * From this input size on, a verbatim copy runs in a worker thread while the main thread writes
 * result.json (2 cores: the copy of a 20 MB input took ~0.3 s of the main thread). A worker
 * costs ~40 ms of start-up on the other core: small inputs (`watch`'s one-order files) are
 * copied in the main thread.
 */
const WORKER_MIN_BYTES = 4 << 20;
/**
 * At most this many distinct row outcomes are handed to a worker (a copy each: ~100 bytes):
 * a big input with errors on most rows is copied in the main thread, as small ones are.
 */
const WORKER_MAX_TAILS = 50_000;
/** The worker's module, beside this one in the built package (absent under a TypeScript runner or a bundler). */
const WORKER_URL = new URL('./result-csv-worker.js', import.meta.url);

export interface ResultCsvOptions {
  /** CSV inputs: the manifest (for itemRows and header) and the mapping it was read with. */
  manifest?: Manifest;
  mapping?: Mapping;
  /** The CSV limits the input was read with, so its rows are read again under the same caps. */
  csvLimits?: Partial<CsvLimits>;
  /** False re-parses a default-template input instead of copying its bytes (tests compare the two). */
  copyVerbatim?: boolean;
  /** Mode and group of the new file (reports in a drop folder). */
  file?: NewFileOptions;
  /** The input to read the rows from (default `report.input.file`). */
  input?: string;
  /**
   * Whether a verbatim copy runs in a worker thread: by default when the input is big and the
   * worker's module is there; true insists (throws where it is not: tests of the built package),
   * false never.
   */
  worker?: boolean;
}

/** result.csv under way: `done` settles once it is written (at once unless a worker thread copies it). */
export interface ResultCsvWrite {
  done: Promise<void>;
}

const WRITTEN: ResultCsvWrite = { done: Promise.resolve() };

export async function writeResultCsv(path: string, report: ResultReport, opts: ResultCsvOptions = {}): Promise<void> {
  await (await beginResultCsv(path, report, opts)).done;
}

/**
 * Starts writing result.csv. What it needs of the report is taken before the first await, so
 * the report may change (its input's name, for result.json) while a worker thread copies; the
 * main thread's share (the re-parse of a copy the worker found not verbatim) uses that too.
 * `done` is never left to reject unobserved.
 */
export async function beginResultCsv(
  path: string,
  report: ResultReport,
  opts: ResultCsvOptions = {},
): Promise<ResultCsvWrite> {
  const input = opts.input ?? report.input.file;
  if (report.input.format === 'xlsx') {
    const results = new RowCells(rowCellsOf(report, opts.manifest));
    await writeFileAtomic(
      path,
      batches(sheetRows(input, opts.manifest?.csv?.header, results, opts), EXCEL_DIALECT),
      opts.file,
    );
    return WRITTEN;
  }
  if (report.input.format !== 'csv') {
    // Not waited for: the caller writes result.json meanwhile, so the two files' writes and
    // fsyncs overlap (the final write of a `run` is on its way to exit).
    const done = writeFileAtomic(path, manifestCsv(report), opts.file);
    done.catch(() => undefined); // observed by the caller's await of `done`
    return { done };
  }
  const header = opts.manifest?.csv?.header;
  const cells = rowCellsOf(report, opts.manifest);
  const reparse = () =>
    writeFileAtomic(
      path,
      batches(reparsedRows(input, header, new RowCells(cells), opts), outputDialect(opts)),
      opts.file,
    );
  if (header !== undefined && canCopyVerbatim(report, opts)) {
    const copy: VerbatimCopy = {
      path,
      input,
      header,
      cells,
      everyRow: opts.mapping !== undefined,
      ...(opts.file ? { file: opts.file } : {}),
    };
    if (await inWorker(input, cells, opts.worker)) {
      const done = copyInWorker(copy).then((copied) => (copied ? undefined : reparse()));
      done.catch(() => undefined); // observed by the caller's await of `done`
      return { done };
    }
    try {
      await writeVerbatimCsv(copy);
      return WRITTEN;
    } catch (err) {
      if (!(err instanceof NotVerbatim)) throw err;
    }
  }
  await reparse();
  return WRITTEN;
}

let workerThere: boolean | undefined;

/** Whether to copy in a worker thread (see WORKER_MIN_BYTES and ResultCsvOptions.worker). */
async function inWorker(input: string, cells: RowCellsTable, want: boolean | undefined): Promise<boolean> {
  if (want === false) return false;
  workerThere ??= WORKER_URL.protocol === 'file:' && existsSync(fileURLToPath(WORKER_URL));
  const there = workerThere;
  if (want === true) {
    if (!there) throw new Error(`result.csv: no worker module at ${WORKER_URL.href} (run the built package)`);
    return true;
  }
  // A table of many distinct outcomes (rows with errors of their own) is not copied to another thread.
  if (!there || cells.tails.length > WORKER_MAX_TAILS) return false;
  const size = await stat(input).then(
    (s) => s.size,
    () => 0, // unreadable now: the copy in this thread says why
  );
  return size >= WORKER_MIN_BYTES;
}

/**
 * Runs the copy in a worker thread (result-csv-worker.ts): true once written, false when not
 * verbatim (nothing is left behind then). Rejects when the copy failed or the worker died: the
 * file may then be partly written, and the caller removes it.
 */
async function copyInWorker(copy: VerbatimCopy): Promise<boolean> {
  // Loaded only for a big input: most checks (one-order files) never start a thread.
  const { Worker } = await import('node:worker_threads');
  return new Promise((resolve, reject) => {
    // The row table (4 bytes a row) is handed over rather than copied; a copy found not
    // verbatim hands it back.
    const worker = new Worker(WORKER_URL, { workerData: copy, transferList: [copy.cells.itemTail.buffer] });
    let answer: WorkerAnswer | undefined;
    worker.once('message', (m: WorkerAnswer) => {
      answer = m;
    });
    worker.once('error', reject);
    // Settled on exit, once the thread and everything it opened are gone.
    worker.once('exit', (code) => {
      if (answer === undefined)
        reject(new Error(`result.csv: the worker thread writing ${copy.path} stopped (exit code ${code})`));
      else if ('done' in answer) resolve(true);
      else if ('notVerbatim' in answer) {
        copy.cells.itemTail = answer.itemTail;
        resolve(false);
      } else reject(Object.assign(new Error(answer.failed.message), { code: answer.failed.code }));
    });
  });
}

/** How result.csv is written: the delimiter, and whether it starts with a UTF-8 byte-order mark. */
interface OutputDialect {
  delimiter: string;
  bom: boolean;
}

const PLAIN_DIALECT: OutputDialect = { delimiter: ',', bom: false };
/** A spreadsheet's own rows: UTF-8 with a BOM, so Excel shows umlauts and accents as they were. */
const EXCEL_DIALECT: OutputDialect = { delimiter: ',', bom: true };

/**
 * An export read in its own dialect (a `;` delimiter, Windows-1252 or UTF-16) gets its report
 * in the same delimiter, so the spreadsheet that made it splits the columns the same way (a
 * German Excel splits on `;`), as UTF-8 with a BOM rather than the input's encoding: Excel
 * reads a BOM-marked UTF-8 file correctly in every locale, and UTF-8 can hold every character
 * of the messages and of any input, where Windows-1252 cannot. The default template (comma,
 * UTF-8) stays as it was, byte for byte where it can.
 */
function outputDialect(opts: ResultCsvOptions): OutputDialect {
  const delimiter = opts.mapping?.delimiter ?? ',';
  const encoding = opts.mapping?.encoding ?? 'utf-8';
  if (delimiter === ',' && encoding === 'utf-8') return PLAIN_DIALECT;
  return { delimiter, bom: true };
}

/**
 * A comma-separated UTF-8 input read without trouble — the default template, or an export in
 * that dialect read through a mapping (Shopify, WooCommerce): its bytes are UTF-8 text in the
 * reader's own records, so they are copied rather than parsed and written again.
 */
function canCopyVerbatim(report: ResultReport, opts: ResultCsvOptions): boolean {
  if (opts.copyVerbatim === false || opts.manifest?.csv?.skipRows !== 0) return false;
  if (opts.mapping && (outputDialect(opts) !== PLAIN_DIALECT || (opts.mapping.skipRows ?? 0) !== 0)) return false;
  return !report.errors.some((e) => CSV_STOPPED_CODES.has(e.code) || e.code === 'csv.encoding' || e.code === 'io.read');
}

async function* batches(
  rows: AsyncIterable<string[]> | Iterable<string[]>,
  dialect: OutputDialect = PLAIN_DIALECT,
): AsyncGenerator<string> {
  if (dialect.bom) yield '\uFEFF';
  if (dialect.delimiter === ',') {
    // csvCell writes a comma-separated cell as csv-stringify does. Each csv-stringify call
    // sets up its options and a transform of its own: for watch's one-order inputs that was
    // most of writing result.csv (~25 kB of garbage each).
    let text = '';
    let n = 0;
    for await (const row of rows) {
      text += commaRow(row);
      if (++n >= BATCH_ROWS) {
        yield text;
        text = '';
        n = 0;
      }
    }
    if (n > 0) yield text;
    return;
  }
  const options = { delimiter: dialect.delimiter };
  let batch: string[][] = [];
  for await (const row of rows) {
    batch.push(row.map(neutraliseCell));
    if (batch.length >= BATCH_ROWS) {
      yield stringify(batch, options);
      batch = [];
    }
  }
  if (batch.length > 0) yield stringify(batch, options);
}

/** A row of comma-separated cells, neutralised, as csv-stringify writes it, with its newline. */
function commaRow(row: readonly string[]): string {
  let text = '';
  for (let c = 0; c < row.length; c++)
    text += c === 0 ? csvCell(neutraliseCell(row[c])) : `,${csvCell(neutraliseCell(row[c]))}`;
  return `${text}\n`;
}

/** A YAML/JSON input's result.csv: the header, then every job's rows. */
async function* manifestCsv(report: ResultReport): AsyncGenerator<string> {
  yield commaRow(YAML_RESULT_COLUMNS);
  yield* batches(manifestRows(report.jobs, report.errors.map(errorText)));
}

/** The rows of a YAML/JSON input's jobs. */
function* manifestRows(jobs: readonly JobResult[], fileErrors: readonly string[]): Generator<string[]> {
  for (const job of jobs) {
    const jobErrors = job.errors.map(errorText);
    const items = peekItems(job);
    if (items.length === 0) {
      yield [
        job.orderNumber ?? '',
        '',
        lineOf(job.source),
        '',
        '',
        '',
        job.status,
        num(job.jobNumber),
        '',
        '',
        [...fileErrors, ...jobErrors].join('; '),
      ];
      continue;
    }
    for (const item of items) {
      yield [
        job.orderNumber ?? '',
        String(item.index),
        lineOf(item.source),
        item.itemType ?? '',
        item.code ?? '',
        num(item.quantity),
        item.status,
        num(job.jobNumber),
        item.newAssetSku ?? '',
        bool(item.needsArtworkToBeUploaded),
        [...fileErrors, ...jobErrors, ...item.errors.map(errorText)].join('; '),
      ];
    }
  }
}

/**
 * The result columns of every row (row-cells.ts): each item row's tail, shared by the rows that
 * show the same outcome (all of a pending job's rows show its items' shared stand-in), in one
 * Int32Array (4 MB per million rows, not a million arrays).
 */
export function rowCellsOf(report: ResultReport, manifest: Manifest | undefined): RowCellsTable {
  const csv = manifest?.csv;
  const jobs = csv === undefined ? 0 : jobCountOf(csv);
  // Read through item-rows.ts: check never makes the per-job row arrays.
  const rowOf = (j: number, k: number) => itemRowOf(csv as CsvOrigin, j, k) as number;
  const countOf = (j: number) => itemCountOf(csv as CsvOrigin, j);
  const merged = csv?.mergedRows ?? [];
  let maxRow = 0;
  let count = 0;
  for (let j = 0; j < jobs; j++) {
    const n = countOf(j);
    count += n;
    for (let k = 0; k < n; k++) {
      const row = rowOf(j, k);
      if (row > maxRow) maxRow = row;
    }
  }
  for (const [r] of merged) if (r > maxRow) maxRow = r;
  // Rows a mapping's skip rules left out: status skipped, the reason in _error.
  const skipped = new Map<number, string>();
  for (const job of report.jobs) {
    if (job.status !== 'skipped') continue;
    for (const item of job.items)
      if (item.source && 'row' in item.source) skipped.set(item.source.row, job.reason ?? '');
  }
  const rowErrors = new Map<number, string[]>();
  for (const e of report.errors) {
    if (e.source && 'row' in e.source) {
      const list = rowErrors.get(e.source.row) ?? [];
      list.push(errorText(e));
      rowErrors.set(e.source.row, list);
    }
  }

  // Tails are shared, not interned by their text: every row of a job whose items are not built
  // shows the same outcome (its items' shared stand-in), and rows with nothing but a status
  // share one per status. Any other row (its own errors, a built item) gets a tail of its own:
  // as many as the report holds such outcomes already.
  const tails: string[][] = [];
  const add = (cells: string[]): number => tails.push(cells) - 1;
  const byStatus = new Map<string, number>();
  let lastJob: JobResult | undefined;
  let lastOutcome: ItemOutcome | undefined;
  let lastId = -1;
  const tailOf = (job: JobResult | undefined, item: ItemOutcome | undefined, row: number): number => {
    const own = rowErrors.size === 0 ? undefined : rowErrors.get(row);
    if (own !== undefined) return add(itemTailCells(job, item, own));
    if (item !== undefined && item === lastOutcome && job === lastJob) return lastId;
    let id: number | undefined;
    if (job !== undefined && item !== undefined && onlyStatus(job, item)) {
      id = byStatus.get(item.status);
      if (id === undefined) {
        id = add(itemTailCells(job, item, []));
        byStatus.set(item.status, id);
      }
    } else id = add(itemTailCells(job, item, []));
    lastJob = job;
    lastOutcome = item;
    lastId = id;
    return id;
  };
  // A row merged into another line of its order shows that line's outcome: the (job, item) of
  // the rows merged ones point into, as the merges are applied in turn.
  const into = new Set(merged.map(([, i]) => i));
  const jobItemOf = new Map<number, readonly [number, number]>();
  const itemTail = new Int32Array(maxRow + 1).fill(-1);
  for (let j = 0; j < jobs; j++) {
    const n = countOf(j);
    const job: JobResult | undefined = report.jobs[j];
    const outcome = job === undefined ? () => undefined : itemOutcomes(job);
    for (let k = 0; k < n; k++) {
      const row = rowOf(j, k);
      itemTail[row] = tailOf(job, outcome(k), row);
      if (into.size > 0 && into.has(row)) jobItemOf.set(row, [j, k]);
    }
  }
  for (const [r, i] of merged) {
    const jk = jobItemOf.get(i);
    if (into.has(r)) jobItemOf.set(r, jk ?? [-1, -1]);
    const job = jk === undefined || jk[0] < 0 ? undefined : report.jobs[jk[0]];
    itemTail[r] = jk === undefined || jk[0] < 0 ? -1 : tailOf(job, job && itemOutcomes(job)(jk[1]), r);
  }
  const otherTail = new Map<number, number>();
  const isItem = (row: number) => row <= maxRow && itemTail[row] >= 0;
  for (const [row, reason] of skipped) if (!isItem(row)) otherTail.set(row, add(['skipped', '', '', '', reason]));
  for (const [row, own] of rowErrors)
    if (!isItem(row) && !skipped.has(row)) otherTail.set(row, add(['invalid', '', '', '', own.join('; ')]));
  return {
    itemTail,
    otherTail,
    plainTail: add([report.errors.length > 0 ? 'invalid' : '', '', '', '', '']),
    tails,
    // A merged row is an item row too: it shows the outcome of the line it joined.
    itemRowCount: count + merged.length,
    tooLarge: report.errors.some((e) => e.code === INPUT_TOO_LARGE),
  };
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

/** ERP inputs and the fallback: every data row re-parsed, padded to the header's width. */
async function* reparsedRows(
  file: string,
  knownHeader: string[] | undefined,
  results: RowCells,
  opts: ResultCsvOptions,
): AsyncGenerator<string[]> {
  // A file refused for its size is not read again to list its rows.
  if (results.tooLarge) {
    yield [...(knownHeader ?? []), ...CSV_RESULT_COLUMNS];
    return;
  }
  const mappingOpt = { mapping: opts.mapping, csv: opts.csvLimits };
  const { readCsvRows, readCsvHeader } = await import('../manifest/csv/read-csv-rows.js');
  const header = knownHeader ?? (await readCsvHeader(file, mappingOpt))?.header ?? [];
  yield [...header, ...CSV_RESULT_COLUMNS];
  for await (const { row, cells } of readCsvRows(file, mappingOpt)) {
    yield [...padTo(cells, header.length), ...results.cells(row)];
  }
}

/** A spreadsheet input: the sheet's rows as the reader saw them (cell text), then the result cells. */
async function* sheetRows(
  file: string,
  knownHeader: string[] | undefined,
  results: RowCells,
  opts: ResultCsvOptions,
): AsyncGenerator<string[]> {
  const { xlsxRows } = await import('../manifest/xlsx/scan-xlsx.js');
  const rows = xlsxRows(file, { sheet: opts.mapping?.sheet, skipRows: opts.mapping?.skipRows }, { problems: [] });
  // The first row is the header, by the reader's own rules (skipped rows, blank rows).
  let width = -1;
  for await (const { row, cells } of rows) {
    if (width < 0) {
      const header = knownHeader ?? cells;
      width = header.length;
      yield [...header, ...CSV_RESULT_COLUMNS];
    } else yield [...padTo(cells, width), ...results.cells(row)];
  }
  if (width < 0) yield [...(knownHeader ?? []), ...CSV_RESULT_COLUMNS];
}

function errorText(e: ReportError): string {
  const s = e.source;
  const where = s && 'row' in s ? (s.columnName ?? e.field) : e.field;
  return where ? `${where}: ${e.message}` : e.message;
}

function lineOf(source: JobResult['source']): string {
  return source && 'line' in source ? String(source.line) : '';
}

function num(n: number | null): string {
  return n === null ? '' : String(n);
}

function bool(b: boolean | null): string {
  return b === null ? '' : b ? 'true' : 'false';
}
