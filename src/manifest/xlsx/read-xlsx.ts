/**
 * The .xlsx reader: one sheet of a workbook (the first, or the mapping's `sheet:`) read as a
 * CSV export is read — default template or any ERP mapping, through the same document builder
 * — so columns, mappings, diagnostics and reports are the same. Row numbers are the sheet's
 * own (header in row 1 → first order in row 2, as Excel shows them).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Mapping } from '../mapping/model.js';
import type { Diagnostic, RawDocument } from '../model.js';
import { CsvDocumentBuilder, rawDocumentOf } from '../csv/document-builder.js';
import { isExpressionMapping, MappedRows } from '../mapping/mapped-rows.js';
import { finishMapped } from '../mapping/merge-lines.js';
import { type XlsxLimits, type XlsxScanResult, xlsxRows } from './scan-xlsx.js';

export interface ReadXlsxOptions {
  mapping?: Mapping;
  /** Overrides the mapping's `sheet`. */
  sheet?: string;
  limits?: Partial<XlsxLimits>;
}

export async function readXlsxDocument(file: string, opts: ReadXlsxOptions = {}): Promise<RawDocument> {
  const skipRows = opts.mapping?.skipRows ?? 0;
  // An expression mapping turns each sheet row into a template row first, as for a CSV export.
  const mapped = isExpressionMapping(opts.mapping)
    ? new MappedRows(file, opts.mapping, {
        onHeader: (cells, row) => builder.onHeader(cells, row),
        onRecord: (cells, row) => builder.onRecord(cells, row),
      })
    : undefined;
  const builder = new CsvDocumentBuilder(file, skipRows, mapped ? mapped.builderMapping : opts.mapping);
  const rows = mapped ?? builder;
  let sha256: string;
  try {
    sha256 = await hashFile(file);
  } catch (err) {
    const diagnostics: Diagnostic[] = [
      {
        severity: 'error',
        code: 'io.read',
        message: `cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
        source: { file },
      },
    ];
    return { file, format: 'xlsx', sha256: '', sources: { locate: () => ({ file }) }, diagnostics };
  }
  const scan: XlsxScanResult = { problems: [] };
  let sawHeader = false;
  const sheet = opts.sheet ?? opts.mapping?.sheet;
  for await (const { row, cells } of xlsxRows(file, { sheet, skipRows, limits: opts.limits }, scan)) {
    if (sawHeader) rows.onRecord(cells, row);
    else {
      sawHeader = true;
      rows.onHeader(cells, row);
    }
    if (mapped) await mapped.drain();
  }
  const parts = builder.result();
  const broken = scan.problems.length > 0;
  const diagnostics: Diagnostic[] = [];
  for (const p of scan.problems) {
    diagnostics.push({
      severity: 'error',
      code: p.code,
      message: p.message,
      source: p.row === undefined ? { file } : { file, row: p.row },
    });
  }
  // A workbook that could not be read has no trustworthy document, and "no rows" says nothing more.
  if (!broken) diagnostics.push(...parts.diagnostics);
  const skipped = mapped ? finishMapped(mapped, parts, diagnostics) : undefined;
  return rawDocumentOf(parts, { file, format: 'xlsx', sha256, broken }, skipped, diagnostics);
}

async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
