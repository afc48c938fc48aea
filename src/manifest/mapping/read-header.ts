/**
 * The first record of a CSV or `.xlsx` input, read through the same CSV grammar and sheet scanner
 * as the whole file and held to the same limits (csvMaxColumns, csvMaxRecordBytes): a hostile
 * header of a million columns stops the read as it would stop the input's, and then there is no
 * header to recognise (the read proper reports the limit).
 */
import { open } from 'node:fs/promises';
import { CsvScanner, dialectOf } from '../csv/csv-scanner.js';
import { CSV_CHUNK_BYTES } from '../csv/read-csv.js';
import type { ManifestFormat } from '../model.js';
import { type CsvLimits, DEFAULT_CSV_LIMITS } from '../read-input.js';

/** The header's cells, or undefined when the input has none that can be read within the limits. */
export async function readHeader(
  file: string,
  format: ManifestFormat,
  limits: Partial<CsvLimits> = {},
): Promise<string[] | undefined> {
  const caps = { ...DEFAULT_CSV_LIMITS, ...limits };
  try {
    if (format === 'xlsx') {
      // The workbook reader is loaded for workbooks only, as the reader proper does.
      const { xlsxRows } = await import('../xlsx/scan-xlsx.js');
      for await (const { cells } of xlsxRows(file, { limits: caps })) return cells;
      return undefined;
    }
    if (format === 'csv') return await csvHeader(file, caps);
  } catch {
    // Unreadable here is unreadable for the read proper too, which says why.
  }
  return undefined;
}

async function csvHeader(file: string, limits: CsvLimits): Promise<string[] | undefined> {
  let header: string[] | undefined;
  const scanner = new CsvScanner(
    dialectOf(undefined),
    {
      header: (cells) => {
        header ??= [...cells];
      },
      record: () => undefined,
    },
    { limits },
  );
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(CSV_CHUNK_BYTES);
    // Blank lines before the header count towards the record cap: the read is bounded either way.
    for (let read = 0; header === undefined && !scanner.stopped && read <= limits.maxRecordBytes; ) {
      const { bytesRead } = await handle.read(buffer, 0, CSV_CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      read += bytesRead;
      scanner.push(buffer.subarray(0, bytesRead));
    }
    if (header === undefined && !scanner.stopped) await scanner.finish();
  } finally {
    await handle.close();
  }
  return header;
}
