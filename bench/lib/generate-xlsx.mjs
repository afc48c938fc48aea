/**
 * Writes a large default-template workbook as a spreadsheet program saves one: the CSV
 * benchmark's 19 columns and orders (lib/generate-csv.mjs), text in the shared-strings table,
 * quantities as numbers, the due date as a date cell, the ZIP code as text; the item type is
 * the last column, so every row reaches the header's last column. Streamed by
 * exceljs's workbook writer (a dev dependency: an independent writer, not htorder's reader's
 * own idea of a workbook), so memory stays flat. 100,000 rows ≈ 3 MB on disk, 40 MB unpacked.
 */
import ExcelJS from 'exceljs';
import { CITIES, HEADER, METHODS, ROWS_PER_ORDER, rng } from './generate-csv.mjs';

/** The template's columns, the item type (never blank) last. */
const COLUMNS = [...HEADER.filter((c) => c !== 'itemType'), 'itemType'];

const PRICE_CODE = 'DTF Full Color 10" x 10"';

/** The cells of one order's rows: the order's own cells on its first row only. */
function orderRows(jobs, random, count) {
  const [city, state, zip] = CITIES[jobs % CITIES.length];
  const first = [
    `Team kit ${jobs % 97}`,
    new Date(Date.UTC(2026, 11, 1 + (jobs % 28))),
    METHODS[jobs % METHODS.length],
    `Contact ${jobs % 1000}`,
    `Club ${jobs % 500}`,
    `512-555-${String(jobs % 10000).padStart(4, '0')}`,
    `${jobs % 900} Main St`,
    city,
    state,
    zip,
    'United States',
  ];
  const rows = [];
  for (let i = 0; i < count; i++) {
    const r = random();
    let item;
    if (r < 0.15) item = ['PriceCode', PRICE_CODE, 10 + Math.floor(random() * 200), `ref-${i}`, 1 + (i % 4)];
    else if (r < 0.85)
      item = ['Asset', `A1${String(Math.floor(random() * 600)).padStart(4, '0')}`, 10 + Math.floor(random() * 90)];
    else
      item = [
        'Stock',
        'GD5000',
        null,
        null,
        null,
        `GD5000-${i % 2 ? 'BLK' : 'WHT'}`,
        `S=${1 + (i % 9)};M=${2 + (i % 7)};XL=${i % 3}`,
      ];
    const order = i === 0 ? first : Array.from({ length: first.length }, () => null);
    const [itemType, ...rest] = item;
    const row = [`SO-${jobs}`, ...order, ...rest];
    while (row.length < COLUMNS.length - 1) row.push(null);
    rows.push([...row, itemType]);
  }
  return rows;
}

/** Writes `rows` data rows to the workbook `file`; resolves with { rows, jobs }. */
export async function generateXlsx(file, rows, seed = 1) {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: true, useStyles: true });
  const ws = wb.addWorksheet('Orders');
  ws.getColumn(3).numFmt = 'yyyy-mm-dd';
  ws.addRow(COLUMNS).commit();
  const random = rng(seed);
  let written = 0;
  let jobs = 0;
  while (written < rows) {
    jobs++;
    for (const row of orderRows(jobs, random, Math.min(ROWS_PER_ORDER, rows - written))) {
      ws.addRow(row).commit();
      written++;
    }
  }
  ws.commit();
  await wb.commit();
  return { rows: written, jobs };
}
