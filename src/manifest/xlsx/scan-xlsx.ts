/**
 * Streams one sheet of an .xlsx workbook as rows of cell text, numbered as Excel shows them,
 * header first, as the CSV scanner hands records on: an .xlsx goes through the same template
 * builder, mappings, row numbers and reports as a CSV export. Blank rows are skipped like blank
 * CSV lines; `skipRows` drops the sheet's first rows.
 *
 * The archive is read through its central directory (zip-directory.ts), so its declared sizes
 * refuse a zip bomb before anything is unpacked. The sheet list and the relationships are read
 * here to find the chosen sheet's part; exceljs's public streaming WorkbookReader then reads a
 * zip stream of only the parts it needs, in the order it needs them (relationships, workbook,
 * shared strings, styles, the one sheet), each unpacked under its declared size: no other sheet
 * is unpacked, and exceljs parks nothing in temporary files (it parks a sheet that comes before
 * the shared strings). The stream stays open until the sheet has been read: unzipper, under
 * exceljs, drops entries still waiting to be handed on when its input ends.
 */
import type { Hash } from 'node:crypto';
import { type EventEmitter, once } from 'node:events';
import { posix } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Mapping } from '../mapping/model.js';
import { type CsvLimits, DEFAULT_CSV_LIMITS, INPUT_TOO_LARGE } from '../read-input.js';
import { decodeEntities, MAX_NUMBER_FORMAT_CHARS, plainNumberFormats } from './number-formats.js';
import { cellText } from './xlsx-cells.js';
import { ZipArchive, type ZipDirectory, type ZipEntry } from './zip-directory.js';

export interface XlsxScanProblem {
  code: 'xlsx.unreadable' | 'xlsx.sheet' | 'xlsx.limit' | typeof INPUT_TOO_LARGE;
  /** The sheet row the problem is at, when there is one. */
  row?: number;
  message: string;
}

/**
 * A mapping's `sheet` (by name; default the first in tab order) and `skipRows` (rows before the
 * header); the CSV limits a sheet's rows are held to as a CSV's records are (default DEFAULT_CSV_LIMITS).
 */
type XlsxScanOptions = Pick<Mapping, 'sheet' | 'skipRows'> & { limits?: RowLimits };

/** Cells a row may reach (csvMaxColumns) and bytes of its cells' text as UTF-8 (csvMaxRecordBytes). */
type RowLimits = Pick<CsvLimits, 'maxColumns' | 'maxRecordBytes'>;

// Caps on a spreadsheet input, so a hostile file stops with a located error (docs/manifests.md).
/** Bytes of the (compressed) file. */
const MAX_FILE_BYTES = 256 * 1024 * 1024;
/** Bytes the workbook's parts unpack to, as its zip directory declares them. */
const MAX_UNPACKED_BYTES = 2 * 1024 * 1024 * 1024;
/**
 * Bytes a part read whole unpacks to (the shared strings, the styles, the workbook and its
 * relationships): each is held in memory, at about one and a half times its size.
 */
const MAX_WHOLE_PART_BYTES = 128 * 1024 * 1024;

type SheetRow = { row: number; cells: string[] };

const RELS = 'xl/_rels/workbook.xml.rels';
const WORKBOOK = 'xl/workbook.xml';
const SHARED_STRINGS = 'xl/sharedStrings.xml';
const STYLES = 'xl/styles.xml';
/** The name the chosen sheet is handed to exceljs under (it takes sheets by such names only). */
const SHEET = 'xl/worksheets/sheet1.xml';
/** An empty shared-strings part. */
const NO_SHARED_STRINGS = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"/>',
);

/**
 * The chosen sheet's non-blank rows after the skipped ones (the header first), streamed; stops
 * quietly where the workbook stops being readable, with the problem in `problems`. `hash` is
 * given the whole file first, read through the same open file as the parts.
 */
export async function* xlsxRows(
  file: string,
  opts: XlsxScanOptions,
  problems: XlsxScanProblem[] = [],
  hash?: Hash,
): AsyncGenerator<SheetRow> {
  const archive = await ZipArchive.open(file);
  try {
    if (hash !== undefined) for await (const chunk of archive.wholeFile()) hash.update(chunk as Buffer);
    yield* archiveRows(archive, opts, problems);
  } finally {
    await archive.close();
  }
}

async function* archiveRows(
  archive: ZipArchive,
  opts: XlsxScanOptions,
  problems: XlsxScanProblem[],
): AsyncGenerator<SheetRow> {
  const unreadable = (why: string): void => {
    const message = `cannot read the workbook: ${why} (is it an .xlsx file saved by Excel or a compatible program?)`;
    problems.push({ code: 'xlsx.unreadable', message });
  };
  const zip = archive.directory;
  if (zip === undefined && archive.size <= MAX_FILE_BYTES) return unreadable('it is not a zip archive');
  const tooLarge = zip === undefined ? sizeProblem(archive.size) : sizeProblem(archive.size, zip);
  if (tooLarge !== undefined) return void problems.push({ code: INPUT_TOO_LARGE, message: tooLarge });
  if (zip === undefined) return;
  const at: PartLocation = {};
  try {
    const book = await bookOf(archive, at);
    if (book === undefined) return unreadable(`it has no ${WORKBOOK}`);
    if (book.longFormat !== undefined) {
      const message =
        `${STYLES}: a number format is ${book.longFormat} characters long, ` +
        `over the ${MAX_NUMBER_FORMAT_CHARS} Excel allows`;
      return void problems.push({ code: 'xlsx.limit', message });
    }
    const sheet = opts.sheet !== undefined ? book.sheets.find((s) => s.name === opts.sheet) : book.sheets[0];
    if (sheet === undefined) {
      const names = book.sheets.map((s) => `"${s.name}"`).join(', ') || '(none)';
      const message =
        opts.sheet !== undefined
          ? `the workbook has no sheet named "${opts.sheet}"; its sheets are: ${names}`
          : 'the workbook has no sheets';
      problems.push({ code: 'xlsx.sheet', message });
      return;
    }
    const part = sheet.part === undefined ? undefined : zip.entries.get(sheet.part);
    if (part === undefined) return unreadable(`the sheet "${sheet.name}" has no part in the archive`);
    const limits = opts.limits ?? DEFAULT_CSV_LIMITS;
    yield* rowsOf(
      archive,
      { ...book, sheet: sheet.name, part },
      { skipRows: opts.skipRows ?? 0, limits },
      problems,
      at,
    );
  } catch (err) {
    const message = locatedProblem(at, (err as Error).message);
    if (err instanceof RowTooLarge) problems.push({ code: 'xlsx.limit', message });
    else unreadable(message);
  }
}

/**
 * Why the file is too large to read: the file, all its parts together, or one part held in
 * memory, as its zip directory declares them (each part is stopped should it unpack past that).
 */
function sizeProblem(fileBytes: number, zip?: ZipDirectory): string | undefined {
  if (fileBytes > MAX_FILE_BYTES)
    return `the file is ${fileBytes} bytes, over the ${MAX_FILE_BYTES}-byte limit for .xlsx`;
  if (zip === undefined) return undefined;
  if (zip.unpackedBytes > MAX_UNPACKED_BYTES) {
    const bytes = Number.isFinite(zip.unpackedBytes) ? `${zip.unpackedBytes} bytes` : 'more than 4 GB';
    return `the workbook unpacks to ${bytes}, over the ${MAX_UNPACKED_BYTES}-byte limit for .xlsx`;
  }
  for (const name of [RELS, WORKBOOK, SHARED_STRINGS, STYLES]) {
    const bytes = zip.entries.get(name)?.unpackedBytes ?? 0;
    if (bytes > MAX_WHOLE_PART_BYTES) {
      return `${name} unpacks to ${bytes} bytes, over the ${MAX_WHOLE_PART_BYTES}-byte limit for a part read whole`;
    }
  }
  return undefined;
}

/** What is known of the workbook before its sheet is read. */
interface Book {
  /** The sheets in tab order, each with its part (from the relationships). */
  sheets: Array<{ name: string; part: string | undefined }>;
  /** Dates are counted from 1904 (old Mac workbooks). */
  date1904: boolean;
  /** The styles part with its number formats made plain (number-formats.ts), when there is one. */
  styles?: Buffer;
  /** The length of a number format too long to read, when there is one. */
  longFormat?: number;
}

/** The sheet list and relationships, read from their parts; undefined when there is no workbook part. */
async function bookOf(archive: ZipArchive, at: PartLocation): Promise<Book | undefined> {
  const rels = await partText(archive, RELS, at);
  const workbook = await partText(archive, WORKBOOK, at);
  if (workbook === undefined) return undefined;
  const targets = new Map<string, string>();
  for (const a of elements(rels ?? '', 'Relationship')) {
    const id = a.get('Id');
    const target = a.get('Target');
    if (id !== undefined && target !== undefined) targets.set(id, partPath(target));
  }
  const sheets = elements(workbook, 'sheet').map((a) => {
    const rId = [...a].find(([name]) => name === 'id' || name.endsWith(':id'))?.[1];
    return { name: a.get('name') ?? '', part: rId === undefined ? undefined : targets.get(rId) };
  });
  const pr = elements(workbook, 'workbookPr')[0];
  const date1904 = ['1', 'true'].includes(pr?.get('date1904') ?? '');
  const styles = await partText(archive, STYLES, at);
  const plain = styles === undefined ? undefined : plainNumberFormats(styles);
  if (plain !== undefined && 'tooLong' in plain) return { sheets, date1904, longFormat: plain.tooLong };
  return { sheets, date1904, styles: plain === undefined ? undefined : Buffer.from(plain.styles) };
}

/** A small part's text; undefined when the archive has no such part. */
async function partText(archive: ZipArchive, name: string, at: PartLocation): Promise<string | undefined> {
  const entry = archive.directory?.entries.get(name);
  if (entry === undefined) return undefined;
  at.part = name;
  const chunks: Buffer[] = [];
  for await (const chunk of await archive.openEntry(entry)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The attributes of every `<name …>` element of an XML text (any namespace prefix), values with
 * their entities decoded. Enough for the two flat, machine-written parts read here; exceljs,
 * which parses them properly, exposes neither the relationships nor where each sheet's part is.
 */
function elements(xml: string, name: string): Array<Map<string, string>> {
  const found: Array<Map<string, string>> = [];
  // Quoted values may hold a `>`; no `<` is inside a tag, so an unclosed one is given up at the next.
  const tag = new RegExp(`<(?:[\\w.-]+:)?${name}\\s((?:[^<>"']|"[^"]*"|'[^']*')*)>`, 'g');
  for (const m of xml.matchAll(tag)) {
    const attributes = new Map<string, string>();
    for (const a of m[1].matchAll(/([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
      attributes.set(a[1], decodeEntities(a[2] ?? a[3]));
    found.push(attributes);
  }
  return found;
}

/** A relationship's target (relative to `xl/`, or absolute from the archive's root) as a part name. */
function partPath(target: string): string {
  return target.startsWith('/') ? posix.normalize(target.slice(1)) : posix.normalize(`xl/${target}`);
}

/** The chosen sheet, read by exceljs from the parts fed to it. */
async function* rowsOf(
  archive: ZipArchive,
  book: Book & { sheet: string; part: ZipEntry },
  { skipRows, limits }: { skipRows: number; limits: RowLimits },
  problems: XlsxScanProblem[],
  at: PartLocation,
): AsyncGenerator<SheetRow> {
  // Loaded on demand: YAML and CSV runs never pay for the spreadsheet machinery.
  const { default: ExcelJS } = await import('exceljs');
  const input = new PassThrough();
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'cache', // number formats: dates, `00000`
    hyperlinks: 'ignore',
    entries: 'emit', // where the reading is, for a located error
  });
  const partOf: Record<string, string> = { workbook: WORKBOOK, 'shared-strings': SHARED_STRINGS, styles: STYLES };
  // The reader is an EventEmitter (its documented events), which its typings leave out.
  (reader as unknown as EventEmitter).on('entry', (e: { type: string }) => {
    at.part = partOf[e.type] ?? book.part.name;
    if (e.type === 'worksheet') at.sheet = book.sheet;
  });
  at.part = RELS;
  const stop = new AbortController();
  const feeding = feed(archive, input, { ...book, rowSpans: new RowSpans(limits.maxRecordBytes) }, stop.signal);
  // Rejects when feeding fails (never resolves): a read waiting for bytes that will not come ends.
  const failed = feeding.then(() => new Promise<never>(() => {}));
  failed.catch(() => undefined);
  let sheets = 0;
  try {
    for await (const sheetReader of raced(reader, failed)) {
      sheets++;
      for await (const row of raced(sheetReader, failed)) {
        if (row.number <= skipRows) continue;
        const cells = rowCells(row, book.date1904, limits);
        if (typeof cells === 'string') {
          problems.push({ code: 'xlsx.limit', row: row.number, message: `sheet "${book.sheet}": ${cells}` });
          return;
        }
        at.lastRow = row.number;
        if (cells.every((c) => c.trim() === '')) continue;
        yield { row: row.number, cells };
      }
      break; // the one sheet fed
    }
    if (sheets === 0) throw new Error('exceljs handed no sheet reader');
  } catch (err) {
    // A part fed short or long is named by the feeder, wherever the reader was.
    const part = (err as { part?: string }).part;
    if (part !== undefined) {
      at.part = part;
      at.sheet = part === book.part.name ? book.sheet : undefined;
      // A row too large is located after the last row read; a part fed short or long is the whole part's.
      if (!(err instanceof RowTooLarge)) at.lastRow = undefined;
    }
    throw err;
  } finally {
    stop.abort();
    input.destroy();
    await feeding.catch(() => undefined);
  }
}

/**
 * A sheet row's cell texts, by column (gaps as ''), or why the row is over a limit: it reaches
 * past the column limit, or its cells' text passes the byte limit (at the column that passes it).
 */
function rowCells(row: XlsxRow, date1904: boolean, limits: RowLimits): string[] | string {
  const cells: string[] = [];
  let bytes = 0;
  let over: string | undefined;
  row.eachCell({ includeEmpty: false }, (cell, col) => {
    if (over !== undefined) return;
    if (col > limits.maxColumns) {
      over = `this row reaches past column ${limits.maxColumns}, the limit (limit csvMaxColumns)`;
      return;
    }
    const text = cellText(cell.value, cell.numFmt, date1904);
    // A string's UTF-16 length is at most its UTF-8 bytes: a huge one is refused unmeasured.
    bytes += text.length > limits.maxRecordBytes ? text.length : Buffer.byteLength(text);
    if (bytes > limits.maxRecordBytes) {
      const limit = `${limits.maxRecordBytes}-byte limit (limit csvMaxRecordBytes)`;
      over = `column ${columnName(col)}: this row's cells are over the ${limit}`;
      return;
    }
    while (cells.length < col - 1) cells.push('');
    cells[col - 1] = text;
  });
  return over ?? cells;
}

/** A column's letters as Excel shows them: 1 → A, 27 → AA. */
function columnName(col: number): string {
  let name = '';
  for (let n = col; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

type XlsxRow = import('exceljs').Row;

/**
 * Writes the parts exceljs needs into its input as a zip stream of uncompressed entries, each
 * unpacked from the archive at its declared size, but the styles with their number formats made
 * plain. A part that fails rejects with its name.
 */
async function feed(
  archive: ZipArchive,
  input: PassThrough,
  book: Pick<Book, 'styles'> & { part: ZipEntry; rowSpans: RowSpans },
  signal: AbortSignal,
): Promise<void> {
  const entries = archive.directory?.entries;
  const parts = [RELS, WORKBOOK, SHARED_STRINGS, STYLES].map((name) => [name, entries?.get(name)] as const);
  for (const [name, entry] of [...parts, [SHEET, book.part] as const]) {
    // exceljs waits for shared strings before a sheet: a workbook without them gets an empty table.
    const fixed =
      entry === undefined && name === SHARED_STRINGS ? NO_SHARED_STRINGS : name === STYLES ? book.styles : undefined;
    try {
      if (fixed !== undefined) await put(input, Buffer.concat([localHeader(name, fixed.length), fixed]), signal);
      else if (entry !== undefined) {
        await put(input, localHeader(name, entry.unpackedBytes), signal);
        for await (const chunk of await archive.openEntry(entry)) {
          if (entry === book.part) book.rowSpans.check(chunk as Buffer);
          await put(input, chunk as Buffer, signal);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      throw Object.assign(err as Error, { part: entry?.name ?? name });
    }
  }
}

/** A row of the sheet's XML longer than RowSpans allows. */
class RowTooLarge extends Error {}

/**
 * Watches the sheet's XML as it is fed: exceljs holds a cell's whole text before a row is handed
 * on, so a row is stopped here when its XML runs past what csvMaxRecordBytes of text can take
 * (each byte escaped as `&quot;`, and the markup of a thousand cells), before exceljs holds it.
 */
class RowSpans {
  private readonly max: number;
  private since = 0;
  private tail = '';
  private pastRows = false;
  constructor(maxRecordBytes: number) {
    this.max = 8 * maxRecordBytes + 1024 * 1024;
  }
  check(chunk: Buffer): void {
    if (this.pastRows) return;
    // Markers are ASCII: latin1 keeps every byte one character, so offsets are bytes.
    const text = this.tail + chunk.toString('latin1');
    if (text.includes('</sheetData>')) {
      this.pastRows = true;
      return;
    }
    const row = text.lastIndexOf('<row');
    this.since = row >= 0 ? text.length - row : this.since + chunk.length;
    this.tail = text.slice(-11); // a marker split between chunks
    if (this.since > this.max)
      throw new RowTooLarge(`a row's XML runs past ${this.max} bytes (limit csvMaxRecordBytes)`);
  }
}

async function put(input: PassThrough, bytes: Buffer, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (!input.write(bytes)) await once(input, 'drain', { signal });
}

/** A zip local file header for an uncompressed entry of `size` bytes (no checksum: nothing here checks one). */
function localHeader(name: string, size: number): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4); // version needed: 2.0
  header.writeUInt16LE(0x0800, 6); // the name is UTF-8
  header.writeUInt32LE(size, 18);
  header.writeUInt32LE(size, 22);
  header.writeUInt16LE(nameBytes.length, 26);
  return Buffer.concat([header, nameBytes]);
}

/** `source`'s values until it ends, or until `failed` rejects (then that is thrown). */
async function* raced<T>(source: AsyncIterable<T>, failed: Promise<never>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  for (;;) {
    const step = await Promise.race([it.next(), failed]);
    if (step.done) return;
    yield step.value;
  }
}

interface PartLocation {
  /** The part being read (`xl/worksheets/sheet1.xml`). */
  part?: string;
  /** The sheet's name, once the sheet's own part is reached. */
  sheet?: string;
  /**
   * The sheet's last row read whole. The sheet is parsed a chunk of its XML at a time, so the
   * break is in a later row, not always the next one.
   */
  lastRow?: number;
}

/**
 * A reader's error with where it happened: the part, the sheet and the row after which it broke,
 * and the XML parser's `line:column:` prefix spelt out (a line of the part, not of the sheet).
 */
function locatedProblem(at: PartLocation, message: string): string {
  if (at.part === undefined) return message;
  const xml = /^(\d+):(\d+): (.*)$/s.exec(message);
  const why = xml ? `${xml[3].replace(/\.$/, '')} at line ${xml[1]}, column ${xml[2]} of the part` : message;
  const where = [
    ...(at.sheet === undefined ? [] : [`sheet "${at.sheet}"`]),
    ...(at.lastRow === undefined ? [] : [`after row ${at.lastRow}`]),
  ];
  return `${at.part}${where.length > 0 ? ` (${where.join(', ')})` : ''}: ${why}`;
}
