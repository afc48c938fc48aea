/**
 * Streams one sheet of an .xlsx workbook as rows of cell text, with the sheet's own row
 * numbers (row 1 = the sheet's first row, as Excel shows them): the header first, then the
 * records, as the CSV scanner hands them on, so an .xlsx goes through the same template
 * builder, mappings, row numbers and reports as a CSV export.
 *
 * exceljs's streaming WorkbookReader reads the zip entry by entry and the sheet row by row;
 * only the shared-strings table (every distinct text of the workbook) is held in memory.
 * Excel writes the sheets before the shared strings, so exceljs parks a sheet in a temporary
 * file until the strings are read: memory stays bounded by the text, not the rows. Blank rows
 * are skipped like blank CSV lines; `skipRows` drops the sheet's first rows, like the CSV's
 * first lines.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { INPUT_TOO_LARGE } from '../read-input.js';
import { cellText } from './xlsx-cells.js';
import { declaredUnpackedBytes } from './zip-directory.js';

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

/** What the streaming reader exposes at run time beyond its typings (checked, never assumed). */
interface SheetReader extends AsyncIterable<XlsxRowLike> {
  name?: string;
}
interface XlsxRowLike {
  number: number;
  eachCell(opts: { includeEmpty: boolean }, fn: (cell: { value: unknown; numFmt?: string }, col: number) => void): void;
}
interface WorkbookLike {
  model?: { sheets?: Array<{ name?: string }> };
  properties?: { date1904?: boolean; model?: { date1904?: boolean } };
}

/**
 * The chosen sheet's non-blank rows after the skipped ones (the header first), streamed; stops
 * quietly where the workbook stops being readable, with the problem in `result`.
 */
export async function* xlsxRows(
  file: string,
  opts: XlsxScanOptions,
  result: XlsxScanResult,
): AsyncGenerator<{ row: number; cells: string[] }> {
  const problems = result.problems;
  const limits = { ...DEFAULT_XLSX_LIMITS, ...opts.limits };
  const size = (await stat(file)).size;
  if (size > limits.maxFileBytes) {
    problems.push({
      code: INPUT_TOO_LARGE,
      message: `the file is ${size} bytes, over the ${limits.maxFileBytes}-byte limit for .xlsx`,
    });
    return;
  }
  const unpacked = await declaredUnpackedBytes(file);
  if (unpacked !== undefined && unpacked > limits.maxUnpackedBytes) {
    problems.push({
      code: INPUT_TOO_LARGE,
      message:
        `the workbook unpacks to ${Number.isFinite(unpacked) ? `${unpacked} bytes` : 'more than 4 GB'}, ` +
        `over the ${limits.maxUnpackedBytes}-byte limit for .xlsx`,
    });
    return;
  }
  // Loaded on demand: YAML and CSV runs never pay for the spreadsheet machinery.
  const { default: ExcelJS } = await import('exceljs');
  const input = createReadStream(file);
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'cache', // number formats: dates, `00000`
    hyperlinks: 'ignore',
    entries: 'ignore',
  });
  const workbook = reader as unknown as WorkbookLike;
  const seen: string[] = [];
  let chosen: string | undefined;
  let stopped = false;
  const skipRows = opts.skipRows ?? 0;
  try {
    for await (const sheetReader of reader as unknown as AsyncIterable<SheetReader>) {
      const name = sheetReader.name;
      if (name !== undefined) seen.push(name);
      const first = workbook.model?.sheets?.[0]?.name;
      const wanted =
        chosen === undefined &&
        (opts.sheet !== undefined ? name === opts.sheet : name === undefined || first === undefined || name === first);
      if (wanted) chosen = name ?? '(first sheet)';
      // Every sheet is read through (exceljs parks them in temporary files it cleans up only then).
      for await (const row of sheetReader) {
        if (!wanted || stopped || row.number <= skipRows) continue;
        const cells: string[] = [];
        const date1904 = workbook.properties?.model?.date1904 ?? workbook.properties?.date1904 ?? false;
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
          stopped = true;
          continue;
        }
        if (cells.every((c) => c.trim() === '')) continue;
        yield { row: row.number, cells };
      }
    }
  } catch (err) {
    problems.push({
      code: 'xlsx.unreadable',
      message: `cannot read the workbook: ${(err as Error).message} (is it an .xlsx file saved by Excel or a compatible program?)`,
    });
    return;
  } finally {
    input.destroy();
  }
  if (chosen === undefined) {
    problems.push({
      code: 'xlsx.sheet',
      message:
        opts.sheet !== undefined
          ? `the workbook has no sheet named "${opts.sheet}"; its sheets are: ${seen.map((s) => `"${s}"`).join(', ') || '(none)'}`
          : 'the workbook has no sheets',
    });
    return;
  }
  result.sheet = chosen;
}
