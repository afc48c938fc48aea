/**
 * One spreadsheet cell → the text the CSV machinery reads, the text a user sees where it
 * matters: text cells as written (leading zeros kept), numbers as numbers (`24`, `2.4`, no
 * thousands separators), a number formatted `00000` (Excel's "Zip Code") padded as shown,
 * dates as ISO dates, booleans as TRUE/FALSE, an error as its code (`#N/A`), a formula as
 * its cached result. Pure; the streaming lives in scan-xlsx.ts.
 */

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

/** Excel's own test for a date format: a date or time letter outside quotes and [..]. */
export function isDateFormat(numFmt: string | undefined): boolean {
  if (numFmt === undefined || numFmt === '') return false;
  const bare = numFmt.replace(/\[[^\]]*]/g, '').replace(/"[^"]*"/g, '');
  return /[ymdhsb]/i.test(bare.replace(/general/gi, ''));
}

function numberText(n: number, numFmt: string | undefined, date1904: boolean): string {
  // A formula's result or a value exceljs did not turn into a Date, in a date format.
  if (isDateFormat(numFmt)) return dateText(excelSerialToDate(n, date1904));
  // `00000`: digits shown zero-padded to the format's width (US ZIP, DE PLZ kept as numbers).
  if (numFmt !== undefined && /^0+$/.test(numFmt) && Number.isInteger(n) && n >= 0) {
    return String(n).padStart(numFmt.length, '0');
  }
  return String(n);
}

/** Serial day number (1900 system: 25569 = 1970-01-01) → the UTC date and time it names. */
export function excelSerialToDate(serial: number, date1904 = false): Date {
  return new Date(Math.round((serial - 25569 + (date1904 ? 1462 : 0)) * 86_400_000));
}

/**
 * A date as ISO: `2026-12-04` at midnight, else `2026-12-04T09:30:00`. Excel stores wall-clock
 * time without a zone, and exceljs hands it over as that time in UTC, so UTC is read back.
 */
export function dateText(d: Date): string {
  if (Number.isNaN(d.getTime())) return '';
  const iso = d.toISOString();
  const time = iso.slice(11, 19);
  return time === '00:00:00' ? iso.slice(0, 10) : `${iso.slice(0, 10)}T${time}`;
}
