import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import { buildReport } from '../../../src/report/build-report.js';
import { writeReports } from '../../../src/report/write-reports.js';
import { classifyName } from '../../../src/watch/sources/drop-names.js';
import { captureStdio } from '../../support/capture-stdio.js';
import { PipelineHarness } from '../../support/pipeline-harness.js';

const HEADER = [
  'orderNumber',
  'deliveryMethod',
  'contactName',
  'streetAddress',
  'city',
  'state',
  'postalCode',
  'country',
  'itemType',
  'code',
  'quantity',
];
const address = ['UPSGND', 'Ann Lee', '1 Main St', 'Boston', 'MA', '02134', 'US'];

async function writeWorkbook(file: string): Promise<void> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Orders');
  ws.addRow(HEADER);
  ws.addRow(['XL-1', ...address, 'Asset', 'A10001', 24]);
  ws.addRow(['XL-1', '', '', '', '', '', '', '', 'Asset', 'A10001', 26]);
  ws.addRow([]);
  ws.addRow(['XL-2', ...address, 'Asset', 'A10001', 30]);
  await wb.xlsx.writeFile(file);
}

const io = captureStdio();
let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(() => h.close());
beforeEach(() => h.reset());

describe('htorder check, plan and run on an .xlsx', () => {
  it('check passes; run submits each order once; a second run sends nothing; result.csv mirrors the sheet', async () => {
    const file = join(h.workDir, 'orders.xlsx');
    await writeWorkbook(file);
    expect(await runCli(['check', file]), io.err).toBe(0);

    const plan = await h.cli('plan', [file]);
    expect(plan.code, plan.stderr).toBe(0);

    const run = await h.cli('run', [file]);
    expect(run.code, run.stderr).toBe(0);
    const report = await h.report(file);
    expect(report.input.format).toBe('xlsx');
    expect(report.jobs.map((j) => [j.orderNumber, j.status])).toEqual([
      ['XL-1', 'submitted'],
      ['XL-2', 'submitted'],
    ]);

    const bytes = await readFile(`${file}.result.csv`);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]); // UTF-8 with a BOM, for Excel
    const csv = parse(bytes, { bom: true }) as string[][];
    expect(csv[0]).toEqual([...HEADER, '_row', '_status', '_jobNumber', '_newAssetSku', '_needsArtwork', '_error']);
    expect(csv.slice(1).map((r) => [r[0], r[6], r[9], r[11], r[12]])).toEqual([
      ['XL-1', '02134', 'A10001', '2', 'submitted'],
      ['XL-1', '', 'A10001', '3', 'submitted'],
      ['XL-2', '02134', 'A10001', '5', 'submitted'],
    ]);

    const again = await h.cli('run', [file]);
    expect(again.code, again.stderr).toBe(0);
    expect((await h.report(file)).jobs.map((j) => j.status)).toEqual(['already-submitted', 'already-submitted']);
  }, 60_000);

  it("result.csv of a workbook replaced after it was read lists the jobs read, never the new workbook's rows", async () => {
    const file = join(h.workDir, 'orders.xlsx');
    await writeWorkbook(file);
    const loaded = await loadManifest(file);
    const at = new Date('2026-11-23T04:00:00Z');
    const report = buildReport({
      command: 'check',
      input: loaded.input,
      manifest: loaded.manifest,
      diagnostics: loaded.diagnostics,
      startedAt: at,
      finishedAt: at,
    });
    // The next export saved over it while the run submits.
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Orders').addRows([HEADER, ['NEW-1', ...address, 'Asset', 'A10001', 99]]);
    await wb.xlsx.writeFile(file);
    await writeReports(report, { manifest: loaded.manifest });
    const csv = await readFile(`${file}.result.csv`, 'utf8');
    expect(csv).not.toContain('NEW-1');
    expect(csv.split('\n').slice(0, 4)).toEqual([
      'orderNumber,itemIndex,line,itemType,code,quantity,status,jobNumber,newAssetSku,needsArtwork,error',
      'XL-1,0,2,Asset,A10001,24,valid,,,,',
      'XL-1,1,3,Asset,A10001,26,valid,,,,',
      'XL-2,0,5,Asset,A10001,30,valid,,,,',
    ]);
  });

  it('watch takes .xlsx files', () => {
    expect(classifyName('orders.xlsx')).toEqual({ take: true });
    expect(classifyName('~$orders.xlsx')).toEqual({ take: false, reason: 'temporary' });
  });
});
