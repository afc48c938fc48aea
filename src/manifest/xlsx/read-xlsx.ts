/**
 * The .xlsx reader: one sheet of a workbook (the first, or the mapping's `sheet:`) read as a
 * CSV export is read — default template or any ERP mapping, through the same document builder
 * — so columns, mappings, diagnostics and reports are the same. Row numbers are the sheet's
 * own (header in row 1 → first order in row 2, as Excel shows them).
 */
import { createHash } from 'node:crypto';
import type { Mapping } from '../mapping/model.js';
import type { RawDocument } from '../model.js';
import { TemplateReader } from '../csv/document-builder.js';
import { type CsvLimits, DEFAULT_CSV_LIMITS, unreadDocument } from '../read-input.js';
import { type XlsxScanProblem, xlsxRows } from './scan-xlsx.js';

/** `csv`: the CSV limits a sheet's rows are held to (csvMaxColumns, csvMaxRecordBytes), as a CSV's records are. */
export async function readXlsxDocument(
  file: string,
  opts: { mapping?: Mapping; csv?: Partial<CsvLimits> } = {},
): Promise<RawDocument> {
  const skipRows = opts.mapping?.skipRows ?? 0;
  const reader = await TemplateReader.open(file, skipRows, opts.mapping);
  const scan = { sheet: opts.mapping?.sheet, skipRows, limits: { ...DEFAULT_CSV_LIMITS, ...opts.csv } };
  const problems: XlsxScanProblem[] = [];
  // Of the same open file as the parts: the report's sha256 is of the bytes read.
  const hash = createHash('sha256');
  let sawHeader = false;
  try {
    for await (const { row, cells } of xlsxRows(file, scan, problems, hash)) {
      if (sawHeader) reader.rows.record(cells, row);
      else {
        sawHeader = true;
        reader.rows.header(cells, row);
      }
      await reader.drain();
    }
  } catch (err) {
    const message = `cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    return unreadDocument(file, 'xlsx', { severity: 'error', code: 'io.read', message, source: { file } });
  }
  const sha256 = hash.digest('hex');
  return reader.document({ file, format: 'xlsx', sha256, broken: problems.length > 0 }, problems);
}
