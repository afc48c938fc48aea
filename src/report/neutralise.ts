/**
 * Spreadsheet formula injection guard for result.csv: a cell starting with `=`, `+`, `-`,
 * `@`, tab or CR would be run as a formula by Excel/Sheets, so it gets a leading `'`.
 * Plain numbers (`-5`, `+1.5`) are left alone: they evaluate to themselves.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

export function neutraliseCell(cell: string): string {
  return FORMULA_START.test(cell) && !PLAIN_NUMBER.test(cell) ? `'${cell}` : cell;
}
