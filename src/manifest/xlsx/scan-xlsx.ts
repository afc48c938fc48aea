/**
 * Streams one sheet of an .xlsx workbook as rows of cell text, numbered as Excel shows them,
 * header first, as the CSV scanner hands records on: an .xlsx goes through the same template
 * builder, mappings, row numbers and reports as a CSV export. Blank rows are skipped like blank
 * CSV lines; `skipRows` drops the sheet's first rows.
 *
 * The archive is read through its central directory (zip-directory.ts), so its declared sizes
 * refuse a zip bomb before anything is unpacked, and each part is opened at its own offset, in
 * the order the reading needs, whatever order the writer stored them in: the relationships and
 * the workbook (which sheet is which part), the styles and the shared strings (workbook-parts.ts),
 * then the one sheet, streamed row by row (sheet-rows.ts). No other sheet is unpacked.
 */
import type { Hash } from 'node:crypto';
import type { Mapping } from '../mapping/model.js';
import { DEFAULT_CSV_LIMITS, INPUT_TOO_LARGE } from '../read-input.js';
import { MAX_NUMBER_FORMAT_CHARS, type NumberFormat } from './number-formats.js';
import { PartBroken, type RowLimits, RowOverLimit, RowTooLarge, type SheetRow, sheetRows } from './sheet-rows.js';
import {
  type Book,
  RELS,
  readBook,
  readSharedStrings,
  readStyles,
  SHARED_STRINGS,
  STYLES,
  WORKBOOK,
} from './workbook-parts.js';
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

// Caps on a spreadsheet input, so a hostile file stops with a located error (docs/manifests.md).
/** Bytes of the (compressed) file. */
const MAX_FILE_BYTES = 256 * 1024 * 1024;
/** Bytes the workbook's parts unpack to, as its zip directory declares them. */
const MAX_UNPACKED_BYTES = 2 * 1024 * 1024 * 1024;
/**
 * Bytes a part read whole before the sheet unpacks to (the shared strings, the styles, the
 * workbook and its relationships): the shared-strings table is held in memory, at about one
 * and a half times the part's size.
 */
const MAX_WHOLE_PART_BYTES = 128 * 1024 * 1024;

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
    const chosen = await sheetOf(archive, opts.sheet, at);
    if (typeof chosen === 'string') return unreadable(chosen);
    if ('code' in chosen) return void problems.push(chosen);
    const limits = opts.limits ?? DEFAULT_CSV_LIMITS;
    yield* rowsOf(archive, chosen, { skipRows: opts.skipRows ?? 0, limits }, problems, at);
  } catch (err) {
    const message = locatedProblem(at, (err as Error).message);
    if (err instanceof RowTooLarge) problems.push({ code: 'xlsx.limit', message });
    else unreadable(message);
  }
}

/** The sheet to read and what reading it needs; else why there is none (a problem, or why the workbook is unreadable). */
async function sheetOf(
  archive: ZipArchive,
  name: string | undefined,
  at: PartLocation,
): Promise<SheetToRead | XlsxScanProblem | string> {
  const book = await readBook(archive, (part) => {
    at.part = part;
  });
  if (book === undefined) return `it has no ${WORKBOOK}`;
  at.part = STYLES;
  const styles = await readStyles(archive);
  if ('tooLong' in styles) {
    const message =
      `${STYLES}: a number format is ${styles.tooLong} characters long, ` +
      `over the ${MAX_NUMBER_FORMAT_CHARS} Excel allows`;
    return { code: 'xlsx.limit', message };
  }
  const sheet = name !== undefined ? book.sheets.find((s) => s.name === name) : book.sheets[0];
  if (sheet === undefined) {
    const names = book.sheets.map((s) => `"${s.name}"`).join(', ') || '(none)';
    const message =
      name !== undefined
        ? `the workbook has no sheet named "${name}"; its sheets are: ${names}`
        : 'the workbook has no sheets';
    return { code: 'xlsx.sheet', message };
  }
  const part = sheet.part === undefined ? undefined : archive.directory?.entries.get(sheet.part);
  if (part === undefined) return `the sheet "${sheet.name}" has no part in the archive`;
  return { ...book, formats: styles.formats, sheet: sheet.name, part };
}

/** The chosen sheet: its name and part, the workbook's date system and its cell styles' number formats. */
type SheetToRead = Book & { formats: NumberFormat[]; sheet: string; part: ZipEntry };

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

/** The chosen sheet's rows, after the shared-strings table they refer to is read. */
async function* rowsOf(
  archive: ZipArchive,
  sheet: SheetToRead,
  { skipRows, limits }: { skipRows: number; limits: RowLimits },
  problems: XlsxScanProblem[],
  at: PartLocation,
): AsyncGenerator<SheetRow> {
  at.part = SHARED_STRINGS;
  const strings = await readSharedStrings(archive);
  at.part = sheet.part.name;
  at.sheet = sheet.sheet;
  const context = { strings, formats: sheet.formats, date1904: sheet.date1904, skipRows, limits };
  try {
    yield* sheetRows(await archive.openEntry(sheet.part), context, (row) => {
      at.lastRow = row;
    });
  } catch (err) {
    if (err instanceof RowOverLimit) {
      problems.push({ code: 'xlsx.limit', row: err.row, message: `sheet "${sheet.sheet}": ${err.message}` });
      return;
    }
    // A part unpacked short or long is the whole part's problem, wherever the rows were.
    if (err instanceof PartBroken) at.lastRow = undefined;
    throw err;
  }
}

interface PartLocation {
  /** The part being read (`xl/worksheets/sheet1.xml`). */
  part?: string;
  /** The sheet's name, once the sheet's own part is reached. */
  sheet?: string;
  /** The sheet's last row read whole: a break in the sheet's XML is after it. */
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
