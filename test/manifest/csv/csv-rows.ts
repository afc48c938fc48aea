import { dialectOf } from '../../../src/manifest/csv/csv-scanner.js';
import type { ReadCsvOptions } from '../../../src/manifest/csv/read-csv.js';
import { scanCsvFile } from '../../../src/manifest/csv/read-csv.js';

export interface CsvRow {
  row: number;
  cells: string[];
}

/** Every record of a CSV file as result.csv reads it again (scanCsvFile): the header and the data rows. */
export async function csvRows(
  file: string,
  opts: ReadCsvOptions = {},
): Promise<{ header?: { header: string[]; row: number }; rows: CsvRow[] }> {
  let header: { header: string[]; row: number } | undefined;
  const rows: CsvRow[] = [];
  const handlers = {
    header: (cells: string[], row: number) => {
      header = { header: cells, row };
    },
    record: (cells: string[], row: number) => {
      rows.push({ row, cells });
    },
  };
  for await (const _ of scanCsvFile(file, dialectOf(opts.mapping), handlers, { limits: opts.csv }));
  return { header, rows };
}
