import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { itemCountOf, itemRowOf, jobCountOf } from '../../../src/manifest/csv/item-rows.js';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import type { CsvOrigin } from '../../../src/manifest/model.js';
import { buildReport } from '../../../src/report/build-report.js';
import { reportPaths } from '../../../src/report/report-paths.js';
import { writeReports } from '../../../src/report/write-reports.js';
import { tempFiles } from '../../support/temp-files.js';

const files = tempFiles('htorder-item-rows-');

// Orders interleaved, a blank line: rows are physical lines, items in each order's file order.
const CSV = [
  'orderNumber,deliveryMethod,itemType,code,quantity',
  'PO-1,UPS Ground,Asset,A1,1',
  'PO-2,UPS Ground,Asset,A2,2',
  '',
  'PO-1,,Asset,A3,3',
  'PO-2,,Asset,A4,4',
  'PO-1,,Asset,A5,5',
].join('\n');

/** Whether `itemRows` is still the getter that would make the arrays. */
const arraysMade = (csv: CsvOrigin) => Object.getOwnPropertyDescriptor(csv, 'itemRows')?.get === undefined;

describe("a CSV input's item rows", () => {
  it('are read from the table by check, which never makes the arrays; reading itemRows makes them once', async () => {
    const file = await files.write('orders.csv', `${CSV}\n`);
    const loaded = await loadManifest(file);
    const csv = loaded.manifest?.csv as CsvOrigin;
    expect([jobCountOf(csv), itemCountOf(csv, 0), itemCountOf(csv, 1), itemCountOf(csv, 2)]).toEqual([2, 3, 2, 0]);
    expect([itemRowOf(csv, 0, 2), itemRowOf(csv, 1, 1), itemRowOf(csv, 1, 2)]).toEqual([7, 6, undefined]);
    const report = buildReport({
      command: 'check',
      input: loaded.input,
      manifest: loaded.manifest,
      diagnostics: loaded.diagnostics,
      startedAt: new Date(),
    });
    await writeReports(report, { manifest: loaded.manifest });
    expect(arraysMade(csv)).toBe(false);
    // The rows the reports show are the table's.
    const json = JSON.parse(await readFile(reportPaths(file).json, 'utf8'));
    expect(json.jobs.map((j: { items: { source: unknown }[] }) => j.items.map((i) => i.source))).toEqual([
      [{ row: 2 }, { row: 5 }, { row: 7 }],
      [{ row: 3 }, { row: 6 }],
    ]);
    const rows = (await readFile(reportPaths(file).csv, 'utf8')).trim().split('\n').slice(1);
    expect(rows.map((r) => r.split(',')[5])).toEqual(['2', '3', '5', '6', '7']);

    expect(csv.itemRows).toEqual([
      [2, 5, 7],
      [3, 6],
    ]);
    expect(arraysMade(csv)).toBe(true);
    expect(csv.itemRows).toBe(csv.itemRows); // made once
  });

  it('follow the arrays once they are made or assigned (an ERP mapping merging lines edits them)', async () => {
    const loaded = await loadManifest(await files.write('edited.csv', `${CSV}\n`));
    const csv = loaded.manifest?.csv as CsvOrigin;
    csv.itemRows[0] = [2, 7];
    expect([itemCountOf(csv, 0), itemRowOf(csv, 0, 1)]).toEqual([2, 7]);
    csv.itemRows = [[9]];
    expect([jobCountOf(csv), itemRowOf(csv, 0, 0), itemCountOf(csv, 1)]).toEqual([1, 9, 0]);
    expect(loaded.manifest?.sources.locate('jobs[0].items[0].code')).toMatchObject({ row: 9, columnName: 'code' });
  });
});
