/**
 * Spreadsheet serial day numbers, read the one way everywhere: a workbook's date cells, a mapping's
 * `$excelDate`, and the dateDue rule that recognises one written where a date belongs.
 *
 * Excel counts days from 1899-12-30 in its 1900 date system (so day 25569 is 1970-01-01; its
 * fictitious 1900-02-29 lies before every date read here), from 1904-01-01 in the 1904 system;
 * the fraction is the time of day. The time is wall-clock time without a zone, read back as UTC.
 */

/** Day 25569 of the 1900 date system is 1970-01-01; the 1904 system counts 1462 days fewer. */
const UNIX_EPOCH_DAY = 25569;
const DAYS_1904 = 1462;
const DAY_MS = 86_400_000;

/** Serial day number → the UTC date and time it names. */
export function excelSerialToDate(serial: number, date1904 = false): Date {
  return new Date(Math.round((serial - UNIX_EPOCH_DAY + (date1904 ? DAYS_1904 : 0)) * DAY_MS));
}

/** A date as ISO text: `2026-12-04` at midnight, else `2026-12-04T09:30:00`; '' for an invalid date. */
export function dateText(d: Date): string {
  if (Number.isNaN(d.getTime())) return '';
  const iso = d.toISOString();
  const time = iso.slice(11, 19);
  return time === '00:00:00' ? iso.slice(0, 10) : `${iso.slice(0, 10)}T${time}`;
}

/** Serial day number → its date and time as ISO text (dateText). */
export function excelSerialText(serial: number, date1904 = false): string {
  return dateText(excelSerialToDate(serial, date1904));
}
