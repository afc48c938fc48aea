/**
 * One spreadsheet cell → the text the CSV machinery reads, the text a user sees where it
 * matters: text cells as written (leading zeros kept), numbers as numbers (`24`, `2.4`, no
 * thousands separators), a number formatted `00000` (Excel's "Zip Code") padded as shown,
 * dates as ISO dates, booleans as TRUE/FALSE, an error as its code (`#N/A`), a formula as
 * its cached result. Pure; the streaming lives in scan-xlsx.ts.
 */
import { dateText, excelSerialText } from '../../core/excel-date.js';
import { isDateFormat } from './number-formats.js';

export function cellText(value: unknown, numFmt: string | undefined, date1904 = false): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return numberText(value, numFmt, date1904);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return dateText(value);
  if (typeof value !== 'object') return String(value);
  if ('richText' in value && Array.isArray(value.richText)) {
    return (value.richText as Array<{ text?: string | null }>).map((r) => r.text ?? '').join('');
  }
  if ('error' in value && typeof value.error === 'string') return value.error;
  if ('formula' in value || 'sharedFormula' in value || 'result' in value) {
    const result = (value as { result?: unknown }).result;
    return result === undefined ? '' : cellText(result, numFmt, date1904);
  }
  if ('text' in value) return cellText((value as { text?: unknown }).text, numFmt, date1904);
  return '';
}

function numberText(n: number, numFmt: string | undefined, date1904: boolean): string {
  // A formula's result or a value exceljs did not turn into a Date, in a date format.
  if (isDateFormat(numFmt)) return excelSerialText(n, date1904);
  // `00000`: digits shown zero-padded to the format's width (US ZIP, DE PLZ kept as numbers).
  if (numFmt !== undefined && /^0+$/.test(numFmt) && Number.isInteger(n) && n >= 0) {
    return String(n).padStart(numFmt.length, '0');
  }
  return String(n);
}
