/**
 * Streams one sheet of an .xlsx workbook as rows of cell text, with the sheet's own row
 * numbers (row 1 = the sheet's first row, as Excel shows them): the header first, then the
 * records, as the CSV scanner hands them on, so an .xlsx goes through the same template
 * builder, mappings, row numbers and reports as a CSV export.
 *
 * The archive is read through its central directory (zip-directory.ts), part by part in the
 * order a reader needs them: the workbook's relationships, its sheet list, the shared strings
 * and the styles first, then only the chosen sheet, row by row through exceljs's streaming
 * sheet reader. Only the shared-strings table (every distinct text of the workbook) is held in
 * memory; no other sheet is unpacked and nothing is parked in temporary files. exceljs's own
 * front-to-back WorkbookReader is not used: it reads the zip through unzipper's `Parse`
 * stream, which ends itself when its input ends while entries still wait to be handed on, so
 * the last parts (`xl/workbook.xml`, last in exceljs's and other writers' files) were lost in
 * a fraction of reads ("Cannot read properties of undefined (reading 'sheets')"), in most
 * reads of a workbook saved without compression. Blank rows are skipped like blank CSV lines;
 * `skipRows` drops the sheet's first rows, like the CSV's first lines.
 */
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import { INPUT_TOO_LARGE } from '../read-input.js';
import { cellText } from './xlsx-cells.js';
import { ZipArchive } from './zip-directory.js';

export interface XlsxScanProblem {
  code: 'xlsx.unreadable' | 'xlsx.sheet' | 'xlsx.limit' | typeof INPUT_TOO_LARGE;
  /** The sheet row the problem is at, when there is one. */
  row?: number;
  message: string;
}

export interface XlsxScanOptions {
  /** The sheet to read, by name; default the workbook's first sheet (in tab order). */
  sheet?: string;
  /** Sheet rows to drop before the header (a mapping's `skipRows`). */
  skipRows?: number;
  limits?: Partial<XlsxLimits>;
}

/** Caps on a spreadsheet input, so a hostile file stops with a located error. */
export interface XlsxLimits {
  /** Bytes of the (compressed) file. */
  maxFileBytes: number;
  /** Bytes the workbook's parts unpack to, as its zip directory declares them. */
  maxUnpackedBytes: number;
  /** Columns of one row: the cells a row may reach. */
  maxColumns: number;
}

export const DEFAULT_XLSX_LIMITS: XlsxLimits = {
  maxFileBytes: 256 * 1024 * 1024,
  maxUnpackedBytes: 2 * 1024 * 1024 * 1024,
  maxColumns: 1000,
};

export interface XlsxScanResult {
  /** The sheet read (its name), when found. */
  sheet?: string;
  problems: XlsxScanProblem[];
}

/** The parts of exceljs's streaming reader used here, beyond its typings (checked, never assumed). */
interface SheetReader extends AsyncIterable<XlsxRowLike> {
  name?: string;
}
interface XlsxRowLike {
  number: number;
  eachCell(opts: { includeEmpty: boolean }, fn: (cell: { value: unknown; numFmt?: string }, col: number) => void): void;
}
interface WorkbookParts {
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseSharedStrings(entry: Readable): AsyncIterable<unknown>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(entry: Readable, sheetNo: string): Iterable<{ eventType: string; value: SheetReader }>;
  workbookRels?: Array<{ Id?: string; Target?: string }>;
  model?: { sheets?: Array<{ id?: number; name?: string; rId?: string }> };
  properties?: { date1904?: boolean; model?: { date1904?: boolean } };
}
const PART_READERS = ['_parseRels', '_parseWorkbook', '_parseSharedStrings', '_parseStyles', '_parseWorksheet'];

/**
 * The chosen sheet's non-blank rows after the skipped ones (the header first), streamed; stops
 * quietly where the workbook stops being readable, with the problem in `result`.
 */
export async function* xlsxRows(
  file: string,
  opts: XlsxScanOptions,
  result: XlsxScanResult,
): AsyncGenerator<{ row: number; cells: string[] }> {
  const archive = await ZipArchive.open(file);
  try {
    yield* archiveRows(archive, opts, result);
  } finally {
    await archive.close();
  }
}

/** xlsxRows of a workbook already open (the caller closes it). */
export async function* archiveRows(
  archive: ZipArchive,
  opts: XlsxScanOptions,
  result: XlsxScanResult,
): AsyncGenerator<{ row: number; cells: string[] }> {
  const limits = { ...DEFAULT_XLSX_LIMITS, ...opts.limits };
  if (archive.size > limits.maxFileBytes) {
    result.problems.push({
      code: INPUT_TOO_LARGE,
      message: `the file is ${archive.size} bytes, over the ${limits.maxFileBytes}-byte limit for .xlsx`,
    });
    return;
  }
  yield* sheetRows(archive, opts, limits, result);
}

async function* sheetRows(
  archive: ZipArchive,
  opts: XlsxScanOptions,
  limits: XlsxLimits,
  result: XlsxScanResult,
): AsyncGenerator<{ row: number; cells: string[] }> {
  const problems = result.problems;
  const unreadable = (why: string): void => {
    problems.push({
      code: 'xlsx.unreadable',
      message: `cannot read the workbook: ${why} (is it an .xlsx file saved by Excel or a compatible program?)`,
    });
  };
  // Where the reading is, so a broken part is named with its sheet and the last good row.
  const at: PartLocation = {};
  const zip = archive.directory;
  if (zip === undefined) {
    unreadable('it is not a zip archive');
    return;
  }
  if (zip.unpackedBytes > limits.maxUnpackedBytes) {
    problems.push({
      code: INPUT_TOO_LARGE,
      message:
        `the workbook unpacks to ${Number.isFinite(zip.unpackedBytes) ? `${zip.unpackedBytes} bytes` : 'more than 4 GB'}, ` +
        `over the ${limits.maxUnpackedBytes}-byte limit for .xlsx`,
    });
    return;
  }
  // Loaded on demand: YAML and CSV runs never pay for the spreadsheet machinery.
  const { default: ExcelJS } = await import('exceljs');
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from([]), {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'cache', // number formats: dates, `00000`
    hyperlinks: 'ignore',
    entries: 'ignore',
  });
  const workbook = reader as unknown as WorkbookParts;
  const opened: Readable[] = [];
  const part = async (name: string): Promise<Readable | undefined> => {
    const entry = zip.entries.get(name);
    if (entry === undefined) return undefined;
    at.part = name;
    const stream = await archive.openEntry(entry);
    opened.push(stream);
    return stream;
  };
  let chosen: string | undefined;
  const skipRows = opts.skipRows ?? 0;
  try {
    const missing = PART_READERS.filter(
      (m) => typeof (workbook as unknown as Record<string, unknown>)[m] !== 'function',
    );
    if (missing.length > 0) throw new Error(`the installed exceljs has no ${missing.join(', ')} (htorder needs 4.4)`);
    const rels = await part('xl/_rels/workbook.xml.rels');
    if (rels) await workbook._parseRels(rels);
    const book = await part('xl/workbook.xml');
    if (book === undefined) {
      unreadable('it has no xl/workbook.xml');
      return;
    }
    await workbook._parseWorkbook(book);
    const strings = await part('xl/sharedStrings.xml');
    if (strings) for await (const _ of workbook._parseSharedStrings(strings));
    const styles = await part('xl/styles.xml');
    if (styles) await workbook._parseStyles(styles);

    const sheets = workbook.model?.sheets ?? [];
    const sheet = opts.sheet !== undefined ? sheets.find((s) => s.name === opts.sheet) : sheets[0];
    if (sheet === undefined) {
      const names = sheets.map((s) => `"${s.name}"`).join(', ') || '(none)';
      problems.push({
        code: 'xlsx.sheet',
        message:
          opts.sheet !== undefined
            ? `the workbook has no sheet named "${opts.sheet}"; its sheets are: ${names}`
            : 'the workbook has no sheets',
      });
      return;
    }
    chosen = sheet.name ?? '(first sheet)';
    at.sheet = chosen;
    const target = workbook.workbookRels?.find((r) => r.Id === sheet.rId)?.Target;
    const path = target === undefined ? undefined : partPath(target);
    const stream = path === undefined ? undefined : await part(path);
    if (stream === undefined) {
      unreadable(`the sheet "${chosen}" has no part in the archive`);
      return;
    }
    const sheetReader = [...workbook._parseWorksheet(stream, String(sheet.id ?? 1))][0]?.value;
    if (sheetReader === undefined) throw new Error('exceljs handed no sheet reader');
    const date1904 = workbook.properties?.model?.date1904 ?? workbook.properties?.date1904 ?? false;
    for await (const row of sheetReader) {
      if (row.number <= skipRows) continue;
      const cells: string[] = [];
      let tooWide = false;
      row.eachCell({ includeEmpty: false }, (cell, col) => {
        if (col > limits.maxColumns) {
          tooWide = true;
          return;
        }
        while (cells.length < col - 1) cells.push('');
        cells[col - 1] = cellText(cell.value, cell.numFmt, date1904);
      });
      if (tooWide) {
        problems.push({
          code: 'xlsx.limit',
          row: row.number,
          message: `this row reaches past column ${limits.maxColumns}, the limit for a sheet`,
        });
        break;
      }
      at.lastRow = row.number;
      if (cells.every((c) => c.trim() === '')) continue;
      yield { row: row.number, cells };
    }
  } catch (err) {
    unreadable(locatedProblem(at, (err as Error).message));
    return;
  } finally {
    for (const stream of opened) stream.destroy();
  }
  result.sheet = chosen;
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

/** A relationship's target (relative to `xl/`, or absolute from the archive's root) as a part name. */
function partPath(target: string): string {
  return target.startsWith('/') ? posix.normalize(target.slice(1)) : posix.normalize(`xl/${target}`);
}
