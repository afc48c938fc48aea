/**
 * Spreadsheet formula injection guard for result.csv and tracking files: a cell starting with
 * `=`, `+`, `-`, `@`, tab or CR would be run as a formula by Excel/Sheets, so it gets a leading
 * `'`. Plain numbers (`-5`, `+1.5`) are left alone: they evaluate to themselves. A line of a
 * multi-line cell is guarded the same way (an `'` after the line break): an importer that splits
 * records on every line break, whatever the quotes, would start a row with it.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;
/** A line break followed by a formula start: one character each, so the scan is linear in the cell. */
const LINE_FORMULA = /[\r\n](?=[=+\-@\t])/g;
const LINE_BREAK = /[\r\n]/;

export function neutraliseCell(cell: string): string {
  const guarded = FORMULA_START.test(cell) && !PLAIN_NUMBER.test(cell) ? `'${cell}` : cell;
  return LINE_BREAK.test(guarded) ? guarded.replace(LINE_FORMULA, "$&'") : guarded;
}

/** Whether `text` (a record's or a cell's) holds a line break: its cells may need neutraliseCell beyond their first character. */
export function hasLineBreak(text: string): boolean {
  return LINE_BREAK.test(text);
}
