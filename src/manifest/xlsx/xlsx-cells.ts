/**
 * One spreadsheet cell, as the sheet's XML stores it, → the text the CSV machinery reads, the
 * text a user sees where it matters: text cells as written (leading zeros kept), numbers as
 * numbers (`24`, `2.4`, no thousands separators), a number formatted `00000` (Excel's "Zip
 * Code") padded as shown, dates as ISO dates, booleans as TRUE/FALSE, an error as its code
 * (`#N/A`), a formula as its cached result (stored as a cell of its result's type). Pure; the
 * streaming lives in sheet-rows.ts.
 */
import { excelSerialText } from '../../core/excel-date.js';
import type { NumberFormat } from './number-formats.js';

/** A cell as stored: its type (`t`: s, inlineStr, str, b, e, d, n or none) and the text of its value. */
export interface StoredCell {
  type: string | undefined;
  /** The `<v>` text, or an inline string's text; a shared string's index for `s`. */
  value: string;
  format: NumberFormat;
}

/** The cell's text; `strings` is the workbook's shared-strings table. Throws for an index past it. */
export function cellText(cell: StoredCell, strings: readonly string[], date1904: boolean): string {
  const { type, value } = cell;
  switch (type) {
    case 's':
      return sharedString(value, strings);
    case 'inlineStr':
    case 'str':
    case 'e':
      return value;
    case 'b':
      if (value === '') return '';
      return value === '0' || value === 'false' ? 'FALSE' : 'TRUE';
    case 'd':
      return isoDateText(value);
    default: {
      if (value === '') return '';
      const n = numberOf(value);
      return n === undefined ? value : numberText(n, cell.format, date1904);
    }
  }
}

function sharedString(value: string, strings: readonly string[]): string {
  const index = numberOf(value);
  const text = index !== undefined && Number.isInteger(index) ? strings[index] : undefined;
  if (text === undefined) {
    throw new Error(`shared string "${value}" is not in the table (it holds ${strings.length})`);
  }
  return text;
}

/** A number as the sheet shows it, in its format's meaning. */
export function numberText(n: number, format: NumberFormat, date1904 = false): string {
  if (format === 'date') return excelSerialText(n, date1904);
  // `00000`: digits shown zero-padded to the format's width (US ZIP, DE PLZ kept as numbers).
  if (format !== undefined && Number.isInteger(n) && n >= 0) return String(n).padStart(format.zeros, '0');
  return String(n);
}

/** A decimal number as XML Schema writes one; each alternative fails at its first wrong character. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The number a value's text writes, or undefined when it writes none (`0x10`, ``, `1,5`). */
function numberOf(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** An ISO 8601 date cell (`t="d"`): its date, with the time unless it is midnight; other text as it is. */
function isoDateText(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}:\d{2}))?/.exec(value);
  if (m === null) return value;
  return m[2] === undefined || m[2] === '00:00:00' ? m[1] : `${m[1]}T${m[2]}`;
}
