import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { stringify } from 'csv-stringify/sync';
import { type CsvDialect, dialectOf, dialectRead } from '../manifest/csv/csv-scanner.js';
import type { CsvRead, JobList, Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import { type CsvLimits, INPUT_CHANGED } from '../manifest/read-input.js';
import { type NewFileOptions, writeFileAtomic } from '../storage/atomic-write.js';
import { ByteOutput } from './byte-output.js';
import { peekItems } from './lazy-items.js';
import type { JobResult, ResultReport } from './model.js';
import { hasLineBreak, neutraliseCell } from './neutralise.js';
import {
  bool,
  errorText,
  isTooLarge,
  num,
  RowCells,
  type RowCellsTable,
  type RowResults,
  RowsOnDemand,
  rowCellsOf,
} from './row-cells.js';
import type { WorkerAnswer } from './result-csv-worker.js';

/**
 * X.result.csv: one row per item. For a CSV or spreadsheet input, the input's own cells first,
 * verbatim, then `_row,_status,_jobNumber,_newAssetSku,_needsArtwork,_error`; for YAML/JSON a
 * fixed column set. Streamed; every cell is neutralised against spreadsheet formula injection.
 *
 * A CSV input's cells are not kept in memory: the file is read again through the reader's own
 * grammar (scanCsvFile), which gives each record's row number and cells, and the record's own
 * text when it is strict CSV. That text is copied as it stands unless a cell must be neutralised;
 * other records are written from their cells. Both give the same cells.
 */

export const CSV_RESULT_COLUMNS = ['_row', '_status', '_jobNumber', '_newAssetSku', '_needsArtwork', '_error'] as const;

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

/** Rows per yielded batch of text; the text stays well under the size V8 allocates straight into the old generation. */
const BATCH_ROWS = 200;
const LF = 0x0a;
/**
 * First characters of a cell neutraliseCell may change (= + - @ tab CR): such a record is
 * written from its cells, as is one holding a line break (neutraliseCell guards each line).
 */
const FORMULA_START = new Uint8Array(128);
for (const c of '=+-@\t\r') FORMULA_START[c.charCodeAt(0)] = 1;
/**
 * From this input size on, a CSV input's result.csv is written by a worker thread while the main
 * thread writes result.json: the re-read then runs on another core, which `npm run bench:check`
 * shows in its wall time. Below it, the thread's start-up costs more than it saves (`watch`'s
 * one-order inputs). A table of many distinct outcomes (rows with errors of their own) is not
 * copied to another thread.
 */
const WORKER_MIN_BYTES = 4 << 20;
const WORKER_MAX_TAILS = 50_000;
/** The worker's module, beside this one in the built package (absent under a TypeScript runner or a bundler). */
const WORKER_URL = new URL('./result-csv-worker.js', import.meta.url);

export interface ResultCsvOptions {
  /** CSV and spreadsheet inputs: the manifest (for itemRows and header) and the mapping it was read with. */
  manifest?: Manifest<JobList>;
  mapping?: Mapping;
  /** The CSV limits the input was read with, so its rows are read again under the same caps. */
  csvLimits?: Partial<CsvLimits>;
  /** False writes every record of a CSV input from its cells instead of copying its text (tests compare the two). */
  copyVerbatim?: boolean;
  /** Mode and group of the new file (reports in a drop folder). */
  file?: NewFileOptions;
  /** The input to read the rows from (default `report.input.file`). */
  input?: string;
  /**
   * CSV inputs: whether a worker thread writes result.csv: by default when the input is big and
   * the worker's module is there; true insists (throws where it is not: tests of the built
   * package), false never.
   */
  worker?: boolean;
  /**
   * The report's jobs as one instant showed them, each read as its rows are written (a spooled
   * report's, SpooledReport.jobsNow): no row table is made first, and no worker thread writes.
   */
  jobsNow?: (j: number) => JobResult | undefined;
}

/**
 * Writes result.csv. writeReports does not wait for it at once: it writes result.json meanwhile,
 * so the two files' writes and fsyncs overlap. What this needs of the report (the input's name,
 * the row table) is taken before it returns, so the report may change meanwhile (its input's
 * name, for result.json). The promise is never left to reject unobserved.
 */
export function writeResultCsv(path: string, report: ResultReport, opts: ResultCsvOptions = {}): Promise<void> {
  const input = opts.input ?? report.input.file;
  const header = opts.manifest?.csv?.header;
  let done: Promise<void>;
  if (report.input.format === 'csv') {
    // Read again as it was read the first time (declared, or told from its bytes).
    const read = opts.manifest?.csv?.read;
    const skipRows = opts.mapping?.skipRows ?? 0;
    const output = outputDialect(read, opts.mapping);
    const dialect = read === undefined ? dialectOf(opts.mapping) : dialectRead(read, skipRows);
    const job: CsvResultJob = {
      path,
      input,
      header,
      table: opts.jobsNow === undefined ? rowCellsOf(report, opts.manifest) : undefined,
      tooLarge: isTooLarge(report),
      ...(report.input.sha256 ? { sha256: report.input.sha256 } : {}),
      output,
      read: dialect,
      limits: opts.csvLimits,
      // A record's own text is copied only where it is already in the output's separator.
      copyText: opts.copyVerbatim !== false && dialect.delimiter === output.delimiter,
      file: opts.file,
    };
    if (opts.jobsNow !== undefined) {
      const results = rowsOnDemand(report, opts, output.delimiter, encoderOf(output), opts.jobsNow);
      done = writeFileAtomic(path, csvInputChunks(job, results), job.file);
    } else done = inWorker(job, opts.worker).then((yes) => (yes ? writeInWorker(job) : writeCsvResult(job)));
  } else if (report.input.format === 'xlsx') {
    const encode = encoderOf(EXCEL_DIALECT);
    const results =
      opts.jobsNow === undefined
        ? new RowCells(rowCellsOf(report, opts.manifest), ',', encode)
        : rowsOnDemand(report, opts, ',', encode, opts.jobsNow);
    const rows = sheetRows(input, header, results, opts, report.input.sha256 ?? undefined);
    done = writeFileAtomic(path, batches(rows, EXCEL_DIALECT), opts.file);
  } else done = writeFileAtomic(path, manifestCsv(report), opts.file);
  // The input replaced or edited since it was read (a shop's next export written over it while
  // a run submits): its rows now are another file's, which must not be shown beside this one's
  // results. The jobs' own rows are written instead, as for a YAML input.
  done = done.catch((err: unknown) => {
    if ((err as { code?: unknown } | undefined)?.code !== INPUT_CHANGED) throw err;
    return writeFileAtomic(path, manifestCsv(report), opts.file);
  });
  done.catch(() => undefined); // observed by the caller's await of it
  return done;
}

/** result.csv of a CSV input, as plain data: all a worker thread is handed. */
export interface CsvResultJob {
  /** Where result.csv goes (written as `file` says). */
  path: string;
  /** The input, and its header as the reader saw it. */
  input: string;
  header: string[] | undefined;
  /** Every row's result columns (undefined: the caller makes them as rows are written). */
  table: RowCellsTable | undefined;
  /** The input was refused for its size: it is not read again. */
  tooLarge: boolean;
  /** The SHA-256 of the input's bytes as first read: read again, they must be the same (scanCsvFile). */
  sha256?: string;
  /** How result.csv is written, and how the input is read. */
  output: OutputDialect;
  read: CsvDialect;
  limits: Partial<CsvLimits> | undefined;
  /** Copy each strict record's own text (else every record is written from its cells). */
  copyText: boolean;
  file: NewFileOptions | undefined;
}

export function writeCsvResult(job: CsvResultJob): Promise<void> {
  const table = job.table;
  if (table === undefined) return Promise.reject(new Error(`result.csv: no row table to write ${job.path} from`));
  return writeFileAtomic(
    job.path,
    csvInputChunks(job, new RowCells(table, job.output.delimiter, encoderOf(job.output))),
    job.file,
  );
}

function rowsOnDemand(
  report: ResultReport,
  opts: ResultCsvOptions,
  delimiter: string,
  encode: (cells: readonly string[]) => string,
  jobsNow: (j: number) => JobResult | undefined,
): RowsOnDemand {
  return new RowsOnDemand(report, opts.manifest?.csv, jobsNow, delimiter, encode, opts.manifest?.jobs.length ?? 0);
}

let workerThere: boolean | undefined;

/** Whether a worker thread writes this result.csv (see WORKER_MIN_BYTES and ResultCsvOptions.worker). */
async function inWorker(job: CsvResultJob, want: boolean | undefined): Promise<boolean> {
  if (want === false) return false;
  workerThere ??= WORKER_URL.protocol === 'file:' && existsSync(fileURLToPath(WORKER_URL));
  if (want === true && !workerThere)
    throw new Error(`result.csv: no worker module at ${WORKER_URL.href} (run the built package)`);
  if (want === true) return true;
  if (!workerThere || (job.table?.tails.length ?? 0) > WORKER_MAX_TAILS) return false;
  // Unreadable now: the write in this thread says why.
  const size = await stat(job.input).then(
    (s) => s.size,
    () => 0,
  );
  return size >= WORKER_MIN_BYTES;
}

/**
 * Writes result.csv in a worker thread (result-csv-worker.ts): settles once the thread and
 * everything it opened are gone; rejects as the write there failed, or when the thread died.
 */
async function writeInWorker(job: CsvResultJob): Promise<void> {
  // Loaded only for a big input: most checks (one-order files) never start a thread.
  const { Worker } = await import('node:worker_threads');
  return new Promise((resolve, reject) => {
    // The row table (4 bytes a row) is handed over rather than copied.
    const transferList = job.table === undefined ? [] : [job.table.itemTail.buffer];
    const worker = new Worker(WORKER_URL, { workerData: job, transferList });
    let answer: WorkerAnswer | undefined;
    worker.once('message', (m: WorkerAnswer) => {
      answer = m;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (answer === undefined)
        reject(new Error(`result.csv: the worker thread writing ${job.path} stopped (exit code ${code})`));
      else if (answer.failed === undefined) resolve();
      else reject(Object.assign(new Error(answer.failed.message), { code: answer.failed.code }));
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
 * UTF-8) stays as it was, byte for byte where it can. A tab-separated input (a marketplace's
 * `.txt` report, Excel's "Unicode text") gets commas: a spreadsheet opening a `.csv` splits it on
 * its list separator, never on tabs.
 */
function outputDialect(read: CsvRead | undefined, mapping: Mapping | undefined): OutputDialect {
  const separator = read?.delimiter ?? mapping?.delimiter ?? ',';
  const encoding = read?.encoding ?? mapping?.encoding ?? 'utf-8';
  if (separator === ',' && encoding === 'utf-8') return PLAIN_DIALECT;
  return { delimiter: separator === '\t' ? ',' : separator, bom: true };
}

/** Cells as one row of text in the dialect, neutralised and quoted as csv-stringify does, without a line break. */
function encoderOf(dialect: OutputDialect): (cells: readonly string[]) => string {
  if (dialect.delimiter === ',') return (cells) => commaRow(cells, '');
  const options = { delimiter: dialect.delimiter, eof: false };
  return (cells) => stringify([cells.map(neutraliseCell)], options);
}

/**
 * A CSV input's result.csv: its header, then each data record (its own text, or its cells),
 * padded to the header's width, with its result cells. Every record of the file is written,
 * whether an item, a row a mapping skipped, or neither.
 */
async function* csvInputChunks(job: CsvResultJob, results: RowResults): AsyncGenerator<Uint8Array> {
  const dialect = job.output;
  const encode = encoderOf(dialect);
  // Bytes in one reused buffer rather than strings joined per row: lower peak RSS in `npm run bench:check`.
  const out = new ByteOutput();
  if (dialect.bom) out.text('\uFEFF');
  let width = -1;
  const header = (cells: readonly string[]) => {
    width = cells.length;
    out.text(`${encode([...cells, ...CSV_RESULT_COLUMNS])}\n`);
  };
  if (job.header !== undefined) header(job.header);
  const record = (cells: string[], row: number, text: string | undefined) => {
    out.text(text !== undefined && !mayNeutralise(cells) && !hasLineBreak(text) ? text : encode(cells));
    if (cells.length < width) out.text(dialect.delimiter.repeat(width - cells.length));
    out.text(dialect.delimiter);
    out.digits(row);
    out.text(results.tailText(row));
    out.byte(LF);
  };
  // A file refused for its size is not read again to list its rows.
  if (!job.tooLarge) {
    // Loaded on first use: YAML/JSON reports never need the CSV grammar.
    const { scanCsvFile } = await import('../manifest/csv/read-csv.js');
    const handlers = {
      header: (cells: string[]) => {
        if (width < 0) header(cells);
      },
      record,
    };
    const reread = { limits: job.limits, keepText: job.copyText, ...(job.sha256 ? { sha256: job.sha256 } : {}) };
    for await (const _ of scanCsvFile(job.input, job.read, handlers, reread)) {
      if (out.length > 0) yield out.flush();
    }
  }
  if (width < 0) header([]);
  if (out.length > 0) yield out.flush();
}

function mayNeutralise(cells: readonly string[]): boolean {
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i].length === 0 ? 0 : cells[i].charCodeAt(0);
    if (c < 128 && FORMULA_START[c] === 1) return true;
  }
  return false;
}

async function* batches(
  rows: AsyncIterable<string[]> | Iterable<string[]>,
  dialect: OutputDialect = PLAIN_DIALECT,
): AsyncGenerator<string> {
  if (dialect.bom) yield '\uFEFF';
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
}

/**
 * A row of comma-separated cells, neutralised, as csv-stringify writes it, with its newline.
 * Written here rather than by csv-stringify, whose setup per call was most of writing a small
 * result.csv (`watch`'s one-order inputs, `npm run bench:watch`).
 */
function commaRow(row: readonly string[], eol = '\n'): string {
  let text = '';
  for (let c = 0; c < row.length; c++)
    text += c === 0 ? csvCell(neutraliseCell(row[c])) : `,${csvCell(neutraliseCell(row[c]))}`;
  return text + eol;
}

/** One cell as csv-stringify writes it: quoted when it holds a comma, quote or line break. */
export function csvCell(value: string): string {
  if (value === '') return '';
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
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
      const errors = [...fileErrors, ...jobErrors].join('; ');
      yield [job.orderNumber ?? '', '', lineOf(job.source), '', '', '', job.status, num(job.jobNumber), '', '', errors];
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

/** A spreadsheet input: the sheet's rows as the reader saw them (cell text), then the result cells. */
async function* sheetRows(
  file: string,
  knownHeader: string[] | undefined,
  results: RowResults,
  opts: ResultCsvOptions,
  /** The SHA-256 of the workbook as first read: one whose bytes now hash otherwise throws INPUT_CHANGED before a row is given. */
  sha256?: string,
): AsyncGenerator<string[]> {
  const { xlsxRows } = await import('../manifest/xlsx/scan-xlsx.js');
  // xlsxRows hashes the whole file before its first row.
  const hash = sha256 ? createHash('sha256') : undefined;
  const rows = xlsxRows(file, { sheet: opts.mapping?.sheet, skipRows: opts.mapping?.skipRows }, [], hash);
  const same = (): void => {
    if (hash !== undefined && hash.copy().digest('hex') !== sha256)
      throw Object.assign(new Error(`${file} changed after it was read`), { code: INPUT_CHANGED });
  };
  // The first row is the header, by the reader's own rules (skipped rows, blank rows).
  let width = -1;
  for await (const { row, cells } of rows) {
    if (width < 0) {
      same();
      const header = knownHeader ?? cells;
      width = header.length;
      yield [...header, ...CSV_RESULT_COLUMNS];
    } else yield [...padTo(cells, width), ...results.cells(row)];
  }
  if (width < 0) {
    same();
    yield [...(knownHeader ?? []), ...CSV_RESULT_COLUMNS];
  }
}

function padTo(cells: string[], width: number): string[] {
  return cells.length >= width ? cells : [...cells, ...new Array<string>(width - cells.length).fill('')];
}

/** The line of a YAML/JSON source; of a CSV input written so (changed since it was read), its row: the scanner's physical line. */
function lineOf(source: JobResult['source']): string {
  if (!source) return '';
  return 'line' in source ? String(source.line) : String(source.row);
}
