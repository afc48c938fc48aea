import { open } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { itemCountOf, itemRowOf, jobCountOf } from '../manifest/csv/item-rows.js';
import type { CsvOrigin, Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import { CSV_STOPPED_CODES } from '../manifest/csv/read-csv.js';
import { type CsvLimits, INPUT_TOO_LARGE } from '../manifest/read-input.js';
import { CsvRecordScanner, LineEnd, NotVerbatim } from './csv-record-scanner.js';
import { itemOutcome, peekItems } from './lazy-items.js';
import type { JobResult, ReportError, ResultReport } from './model.js';
import { writeAtomicStream } from './atomic-stream.js';
import type { NewFileOptions } from '../storage/atomic-write.js';
import { neutraliseCell } from './neutralise.js';

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
export const CSV_RESULT_COLUMNS = ['_row', '_status', '_jobNumber', '_newAssetSku', '_needsArtwork', '_error'] as const;

/** Rows per csv-stringify call; the text stays well under the size V8 allocates straight into the old generation. */
const BATCH_ROWS = 200;
/** Read size for the verbatim copy, and how much output is gathered per write. */
const COPY_CHUNK_BYTES = 1 << 20;

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
}

export async function writeResultCsv(path: string, report: ResultReport, opts: ResultCsvOptions = {}): Promise<void> {
  if (report.input.format === 'xlsx') {
    const results = new RowResults(report, opts.manifest);
    await writeAtomicStream(
      path,
      batches(sheetRows(report.input.file, opts.manifest?.csv?.header, results, opts), EXCEL_DIALECT),
      opts.file,
    );
    return;
  }
  if (report.input.format !== 'csv') {
    await writeAtomicStream(path, batches(manifestRows(report)), opts.file);
    return;
  }
  const header = opts.manifest?.csv?.header;
  const results = new RowResults(report, opts.manifest);
  if (header !== undefined && canCopyVerbatim(report, opts)) {
    try {
      await writeAtomicStream(
        path,
        verbatimChunks(report.input.file, header, results, opts.mapping !== undefined),
        opts.file,
      );
      return;
    } catch (err) {
      if (!(err instanceof NotVerbatim)) throw err;
    }
  }
  await writeAtomicStream(
    path,
    batches(reparsedRows(report.input.file, header, results, opts), outputDialect(opts)),
    opts.file,
  );
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
      for (let c = 0; c < row.length; c++)
        text += c === 0 ? csvCell(neutraliseCell(row[c])) : `,${csvCell(neutraliseCell(row[c]))}`;
      text += '\n';
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

function* manifestRows(report: ResultReport): Generator<string[]> {
  yield [...YAML_RESULT_COLUMNS];
  const fileErrors = report.errors.map(errorText);
  for (const job of report.jobs) {
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

/** The result columns of each input row: row → (job, item) in flat typed arrays (8 MB per million rows, not a million objects). */
class RowResults {
  private readonly rowJob: Int32Array;
  private readonly rowItem: Int32Array;
  private readonly maxRow: number;
  /** File-level errors that point at a row are shown on that row. */
  private readonly rowErrors = new Map<number, string[]>();
  private readonly anyFileError: boolean;
  private readonly skipped = new Map<number, string>();
  /** How many rows are items. */
  readonly itemRowCount: number;
  /** The input was refused for its size: nothing of it was read. */
  readonly tooLarge: boolean;

  constructor(
    private readonly report: ResultReport,
    manifest: Manifest | undefined,
  ) {
    const csv = manifest?.csv;
    const jobs = csv === undefined ? 0 : jobCountOf(csv);
    // Read through item-rows.ts: check never makes the per-job row arrays.
    const rowOf = (j: number, k: number) => itemRowOf(csv as CsvOrigin, j, k) as number;
    const countOf = (j: number) => itemCountOf(csv as CsvOrigin, j);
    this.tooLarge = report.errors.some((e) => e.code === INPUT_TOO_LARGE);
    let maxRow = 0;
    let count = 0;
    for (let j = 0; j < jobs; j++) {
      const n = countOf(j);
      count += n;
      for (let k = 0; k < n; k++) if (rowOf(j, k) > maxRow) maxRow = rowOf(j, k);
    }
    const merged = manifest?.csv?.mergedRows ?? [];
    for (const [r] of merged) if (r > maxRow) maxRow = r;
    this.maxRow = maxRow;
    // A merged row is an item row too: it shows the outcome of the line it joined.
    this.itemRowCount = count + merged.length;
    this.rowJob = new Int32Array(maxRow + 1).fill(-1);
    this.rowItem = new Int32Array(maxRow + 1).fill(-1);
    for (let j = 0; j < jobs; j++) {
      const n = countOf(j);
      for (let k = 0; k < n; k++) {
        const row = rowOf(j, k);
        this.rowJob[row] = j;
        this.rowItem[row] = k;
      }
    }
    // A row merged into another line of its order shows that line's outcome.
    for (const [r, into] of merged) {
      this.rowJob[r] = this.rowJob[into];
      this.rowItem[r] = this.rowItem[into];
    }
    // Rows a mapping's skip rules left out: status skipped, the reason in _error.
    for (const job of report.jobs) {
      if (job.status !== 'skipped') continue;
      for (const item of job.items)
        if (item.source && 'row' in item.source) this.skipped.set(item.source.row, job.reason ?? '');
    }
    for (const e of report.errors) {
      if (e.source && 'row' in e.source) {
        const list = this.rowErrors.get(e.source.row) ?? [];
        list.push(errorText(e));
        this.rowErrors.set(e.source.row, list);
      }
    }
    this.anyFileError = report.errors.length > 0;
  }

  isItem(row: number): boolean {
    return row <= this.maxRow && this.rowJob[row] >= 0;
  }

  /** `_row, _status, _jobNumber, _newAssetSku, _needsArtwork, _error` of the input row. */
  cells(row: number): string[] {
    const j = row <= this.maxRow ? this.rowJob[row] : -1;
    const own = this.rowErrors.get(row) ?? [];
    const skip = j < 0 ? this.skipped.get(row) : undefined;
    if (skip !== undefined) return [String(row), 'skipped', '', '', '', skip];
    if (j < 0) return [String(row), own.length > 0 || this.anyFileError ? 'invalid' : '', '', '', '', own.join('; ')];
    const job: JobResult | undefined = this.report.jobs[j];
    const item = job === undefined ? undefined : itemOutcome(job, this.rowItem[row]);
    const errors =
      own.length === 0 && (job?.errors.length ?? 0) === 0 && (item?.errors.length ?? 0) === 0
        ? ''
        : [...own, ...(job?.errors ?? []).map(errorText), ...(item?.errors ?? []).map(errorText)].join('; ');
    return [
      String(row),
      item?.status ?? job?.status ?? '',
      num(job?.jobNumber ?? null),
      item?.newAssetSku ?? '',
      bool(item?.needsArtworkToBeUploaded ?? null),
      errors,
    ];
  }
}

/** ERP inputs and the fallback: every data row re-parsed, padded to the header's width. */
async function* reparsedRows(
  file: string,
  knownHeader: string[] | undefined,
  results: RowResults,
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
  results: RowResults,
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

function padTo(cells: string[], width: number): string[] {
  return cells.length >= width ? cells : [...cells, ...new Array<string>(width - cells.length).fill('')];
}

/**
 * Each data record's bytes as they are, then the result cells. Throws NotVerbatim (before
 * anything is renamed into place) when the records found are not exactly the item rows the
 * reader found: the caller then re-parses instead. `everyRow` (mapped exports): rows that are
 * not items (skipped, ignored) are copied too, with their own result cells, as the re-parse does.
 */
async function* verbatimChunks(
  file: string,
  header: string[],
  results: RowResults,
  everyRow = false,
): AsyncGenerator<string | Uint8Array> {
  yield stringify([[...header, ...CSV_RESULT_COLUMNS].map(neutraliseCell)]);
  const out = new OutputBuffer(COPY_CHUNK_BYTES * 2);
  const scanner = new CsvRecordScanner();
  const width = header.length;
  let nextRow = 1;
  let sawHeader = false;
  let copied = 0;

  const take = (data: Buffer, start: number): void => {
    const row = nextRow;
    nextRow = row + 1 + scanner.breaks;
    if (scanner.blank) return;
    if (!sawHeader) {
      sawHeader = true;
      return;
    }
    if (results.isItem(row)) copied++;
    else if (!everyRow) throw new NotVerbatim(`row ${row} is not one the reader kept`);
    const tail = results.cells(row);
    if (scanner.reparse) {
      const lineEnd = scanner.lineEnd === LineEnd.CRLF ? '\r\n' : '\n';
      const parsed = parse(data.subarray(start, scanner.end), {
        delimiter: ',',
        relax_quotes: true,
        relax_column_count: true,
        record_delimiter: lineEnd,
      }) as string[][];
      if (parsed.length !== 1) throw new NotVerbatim(`row ${row} re-parses as ${parsed.length} records`);
      out.text(stringify([[...padTo(parsed[0], width), ...tail].map(neutraliseCell)]));
      return;
    }
    out.bytes(data, start, scanner.end);
    let text = scanner.cells < width ? ','.repeat(width - scanner.cells) : '';
    for (let c = 0; c < tail.length; c++) text += `,${csvCell(neutraliseCell(tail[c]))}`;
    out.text(`${text}\n`);
  };

  // One reused read buffer: the unscanned tail of a read is moved to its front and the next
  // read lands after it. A fresh buffer per read (a read stream, Buffer.concat for the tail)
  // made ~2 MB of short-lived off-heap memory per MB of input, which RSS showed.
  let buf = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
  let held = 0; // bytes at the front of buf not yet scanned
  let first = true;
  const handle = await open(file, 'r');
  try {
    for (;;) {
      if (held === buf.length) {
        const grown = Buffer.allocUnsafe(buf.length * 2); // a record longer than the buffer
        buf.copy(grown, 0, 0, held);
        buf = grown;
      }
      const { bytesRead } = await handle.read(buf, held, buf.length - held, null);
      const eof = bytesRead === 0;
      const data = buf.subarray(0, held + bytesRead);
      let pos = 0;
      if (first) {
        if (data.length < 3 && !eof) {
          held = data.length;
          continue;
        }
        first = false;
        if (data.length >= 2 && ((data[0] === 0xff && data[1] === 0xfe) || (data[0] === 0xfe && data[1] === 0xff)))
          throw new NotVerbatim('UTF-16 input');
        if (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) pos = 3;
      }
      while (pos < data.length && scanner.scan(data, pos, eof)) {
        take(data, pos);
        pos = scanner.next;
      }
      if (eof) break;
      held = data.length - pos;
      if (held > 0 && pos > 0) buf.copyWithin(0, pos, data.length);
      if (out.length >= COPY_CHUNK_BYTES) yield out.flush();
    }
  } finally {
    await handle.close();
  }
  if (copied !== results.itemRowCount)
    throw new NotVerbatim(`found ${copied} item rows, the reader ${results.itemRowCount}`);
  if (out.length > 0) yield out.flush();
}

/** Output gathered in one reusable buffer (safe: the writer awaits each chunk before asking for the next). */
class OutputBuffer {
  private buf: Buffer;
  length = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  bytes(src: Uint8Array, start: number, end: number): void {
    this.reserve(end - start);
    this.buf.set(src.subarray(start, end), this.length);
    this.length += end - start;
  }

  text(s: string): void {
    this.reserve(s.length * 3);
    this.length += this.buf.write(s, this.length, 'utf8');
  }

  flush(): Buffer {
    const chunk = this.buf.subarray(0, this.length);
    this.length = 0;
    return chunk;
  }

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }
}

/** One cell as csv-stringify writes it: quoted when it holds a comma, quote or line break. */
export function csvCell(value: string): string {
  if (value === '') return '';
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
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
