import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { buildReport } from '../../../src/report/build-report.js';
import { writeResultCsv } from '../../../src/report/write-result-csv.js';
import { loadText } from '../../support/manifest-files.js';

/**
 * Found by the fuzz suite (issue 7, test/fuzz): a CSV whose lines end in a MIX of CRLF and LF
 * (files concatenated from Windows and Unix exports, or edited in two editors) is read as if
 * only the first line's ending were a record separator: csv-parse detects `record_delimiter`
 * from the first line, so every later bare LF becomes part of a cell ("50\nPO-2") and the
 * rows merge. The same rows with uniform endings are valid.
 *
 * Fixed in src/manifest/csv/csv-scanner.ts: csv-parse gets `record_delimiter: ['\r\n', '\n', '\r']`
 * (CRLF first, so it counts once), matching the scanner's physical row counting.
 */

const HEADER = 'orderNumber,deliveryMethod,streetAddress,city,state,postalCode,country,itemType,code,quantity';
const ROW = (n: number) => `PO-${n},UPSGND,1 Main St,Austin,TX,78701,US,Asset,A10001,50`;

describe('CSV with mixed line endings', () => {
  it('uniform LF and uniform CRLF are read the same (control)', async () => {
    for (const eol of ['\n', '\r\n']) {
      const { diagnostics, manifest } = await loadText([HEADER, ROW(1), ROW(2), ''].join(eol), 'orders.csv');
      expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(manifest!.jobs.map((j) => j.orderNumber)).toEqual(['PO-1', 'PO-2']);
    }
  });

  it('CRLF then LF: two valid jobs, rows numbered 2 and 3', async () => {
    const { diagnostics, manifest } = await loadText(`${HEADER}\r\n${ROW(1)}\n${ROW(2)}\r\n`, 'orders.csv');
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(manifest!.jobs.map((j) => j.orderNumber)).toEqual(['PO-1', 'PO-2']);
    expect(manifest!.csv!.itemRows).toEqual([[2], [3]]);
  });

  it('LF then CRLF: two valid jobs (works today: the stray CR is trimmed from the last cell)', async () => {
    const { diagnostics, manifest } = await loadText(`${HEADER}\n${ROW(1)}\r\n${ROW(2)}\n`, 'orders.csv');
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(manifest!.jobs.map((j) => j.orderNumber)).toEqual(['PO-1', 'PO-2']);
  });

  it('rows are physical lines: a quoted CRLF inside a cell and LF line ends after a CRLF line', async () => {
    const QUOTED = 'PO-2,UPSGND,"1 Main St\r\nSuite 5",Austin,TX,78701,US,Asset,A10001,50';
    const { diagnostics, manifest } = await loadText(
      `${HEADER}\r\n${ROW(1)}\n${QUOTED}\n\n${ROW(3)}\r\n`,
      'orders.csv',
    );
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(manifest!.jobs.map((j) => j.orderNumber)).toEqual(['PO-1', 'PO-2', 'PO-3']);
    expect(manifest!.jobs[1].deliveryAddress.streetAddress).toBe('1 Main St\r\nSuite 5');
    // header 1, PO-1 2, PO-2 3–4, blank 5, PO-3 6
    expect(manifest!.csv!.itemRows).toEqual([[2], [3], [6]]);
  });

  it('a lone CR ends a line too (old Mac exports, or one stray line)', async () => {
    const { diagnostics, manifest } = await loadText(`${HEADER}\n${ROW(1)}\r${ROW(2)}\n`, 'orders.csv');
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(manifest!.jobs.map((j) => j.orderNumber)).toEqual(['PO-1', 'PO-2']);
    expect(manifest!.csv!.itemRows).toEqual([[2], [3]]);
  });

  it('result.csv has one row per input row, with its row number, whether copied or re-parsed', async () => {
    const { file, diagnostics, manifest } = await loadText(`${HEADER}\r\n${ROW(1)}\n${ROW(2)}\r\n`, 'orders.csv');
    const report = buildReport({
      command: 'check',
      input: { file, format: 'csv' },
      manifest,
      diagnostics,
      startedAt: new Date(0),
    });
    const texts: string[] = [];
    for (const copyVerbatim of [true, false]) {
      await writeResultCsv(`${file}.result.csv`, report, { manifest, copyVerbatim });
      texts.push(await readFile(`${file}.result.csv`, 'utf8'));
    }
    expect(texts[0]).toBe(texts[1]);
    expect(texts[0].split('\r\n').join('\n')).toBe(
      `${HEADER},_row,_status,_jobNumber,_newAssetSku,_needsArtwork,_error\n${ROW(1)},2,valid,,,,\n${ROW(2)},3,valid,,,,\n`,
    );
  });
});
