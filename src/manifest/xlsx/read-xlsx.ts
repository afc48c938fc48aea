/**
 * The .xlsx reader: one sheet of a workbook (the first, or the mapping's `sheet:`) read as a
 * CSV export is read — default template or any ERP mapping, through the same document builder
 * — so columns, mappings, diagnostics and reports are the same. Row numbers are the sheet's
 * own (header in row 1 → first order in row 2, as Excel shows them).
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Mapping } from '../mapping/model.js';
import type { Diagnostic, RawDocument } from '../model.js';
import { CsvDocumentBuilder, rawDocumentOf } from '../csv/document-builder.js';
import { isExpressionMapping } from '../mapping/expression-mapping.js';
import { MappedRows } from '../mapping/mapped-rows.js';
import { finishMapped } from '../mapping/merge-lines.js';
import { archiveRows, type XlsxLimits, type XlsxScanResult } from './scan-xlsx.js';
import { ZipArchive } from './zip-directory.js';

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
  // One open file for the hash and the parts: the report's sha256 is of the bytes read.
  let archive: ZipArchive;
  try {
    archive = await ZipArchive.open(file);
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
  let sha256: string;
  try {
    sha256 = await hashOf(archive.wholeFile());
    for await (const { row, cells } of archiveRows(archive, { sheet, skipRows, limits: opts.limits }, scan)) {
      if (sawHeader) rows.onRecord(cells, row);
      else {
        sawHeader = true;
        rows.onHeader(cells, row);
      }
      if (mapped) await mapped.drain();
    }
  } finally {
    await archive.close();
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

async function hashOf(bytes: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of bytes) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
