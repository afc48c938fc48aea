/**
 * The .xlsx reader: one sheet of a workbook (the first, or the mapping's `sheet:`) read as a
 * CSV export is read — default template or any ERP mapping, through the same document builder
 * — so columns, mappings, diagnostics and reports are the same. Row numbers are the sheet's
 * own (header in row 1 → first order in row 2, as Excel shows them).
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Mapping } from '../mapping/model.js';
import type { RawDocument } from '../model.js';
import { TemplateReader, unreadDocument } from '../csv/document-builder.js';
import { archiveRows, type XlsxLimits, type XlsxScanProblem } from './scan-xlsx.js';
import { ZipArchive } from './zip-directory.js';

export interface ReadXlsxOptions {
  mapping?: Mapping;
  limits?: Partial<XlsxLimits>;
}

export async function readXlsxDocument(file: string, opts: ReadXlsxOptions = {}): Promise<RawDocument> {
  const skipRows = opts.mapping?.skipRows ?? 0;
  const reader = await TemplateReader.open(file, skipRows, opts.mapping);
  // One open file for the hash and the parts: the report's sha256 is of the bytes read.
  let archive: ZipArchive;
  try {
    archive = await ZipArchive.open(file);
  } catch (err) {
    const message = `cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    return unreadDocument(file, 'xlsx', { severity: 'error', code: 'io.read', message, source: { file } });
  }
  const problems: XlsxScanProblem[] = [];
  const sheet = opts.mapping?.sheet;
  let sawHeader = false;
  let sha256: string;
  try {
    sha256 = await hashOf(archive.wholeFile());
    for await (const { row, cells } of archiveRows(archive, { sheet, skipRows, limits: opts.limits }, problems)) {
      if (sawHeader) reader.rows.record(cells, row);
      else {
        sawHeader = true;
        reader.rows.header(cells, row);
      }
      await reader.drain();
    }
  } finally {
    await archive.close();
  }
  return reader.document({ file, format: 'xlsx', sha256, broken: problems.length > 0 }, problems);
}

async function hashOf(bytes: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of bytes) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
