import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import type { ResultReport } from '../../src/report/model.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';

/**
 * Issue 14: a German ERP export re-saved by Excel (samples/erp-de/), with its mapping in the
 * expression language, checked, planned and run against the sandbox's demo account (us-demo
 * ships to DE and DK; the sandbox has no German account), the account `htorder demo` uses.
 */
const SAMPLE = join(ROOT, 'samples/erp-de/auftraege.csv');
const MAPPING = join(ROOT, 'samples/erp-de/mapping.yaml');
const io = captureStdio();

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(() => h.close());
beforeEach(() => h.reset());

const placed = (r: ResultReport) =>
  r.jobs.map((j) => [j.orderNumber, j.status, j.dateDue, j.items.map((i) => `${i.itemType} ${i.code} ${i.quantity}`)]);

describe('the German ERP export (samples/erp-de)', () => {
  it('is what Excel leaves behind: Windows-1252, ;, CRLF, no BOM, decimal commas, a serial date, trailing ;;;; rows', async () => {
    const bytes = await readFile(SAMPLE);
    expect([...bytes.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.includes(Buffer.from('Gr\xf6\xdfe', 'latin1'))).toBe(true); // Größe in Windows-1252
    expect(bytes.includes(0x80)).toBe(true); // € in Windows-1252
    const text = iconv.decode(bytes, 'windows-1252');
    expect(text.split('\r\n').length).toBeGreaterThan(8);
    expect(text.includes('\n') && !/[^\r]\n/.test(text)).toBe(true);
    for (const s of [
      '24,00',
      '2,40 €',
      '04.12.2026',
      ';46363;',
      ';1099;',
      'Deutschland',
      'storniert',
      ';;;;;;;;;;;;;;;;;\r\n',
    ])
      expect(text).toContain(s);
  });

  it('check: three orders valid, the cancelled one skipped, the PLZ padded with a warning at its row and column', async () => {
    const file = join(h.workDir, 'auftraege.csv');
    await copyFile(SAMPLE, file);
    expect(await runCli(['check', file, '--mapping', MAPPING]), io.err).toBe(0);
    expect(io.err).toContain(`${file}:2: PLZ: "1099" has four digits; German postal codes (PLZ) have five`);
    expect(io.err).toContain(`skipped: ${file}:5 (order ERP-100232): storniert (cancelled in the ERP)`);
  });

  it('plan shows exactly the orders to place; run submits them once; a second run sends nothing; result.csv in the export’s dialect', async () => {
    const file = join(h.workDir, 'auftraege.csv');
    await copyFile(SAMPLE, file);
    const env = h.env();
    const plan = await h.cli('plan', [file], { mapping: MAPPING, env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(placed(await h.report(file))).toEqual([
      ['ERP-100231', 'valid', '2026-12-04', ['Asset A10001 24', 'Stock GD5000 16']],
      ['ERP-100233', 'valid', '2026-12-07', ['Asset A10001 30']], // 46363, declared as a serial
      ['ERP-100234', 'valid', '2026-12-10', ['Stock GD5000 12']],
      ['ERP-100232', 'skipped', null, ['null null null']],
    ]);

    const run = await h.cli('run', [file], { mapping: MAPPING, env });
    expect(run.code, run.stderr).toBe(0);
    const report = await h.report(file);
    expect(report.jobs.map((j) => [j.orderNumber, j.status])).toEqual([
      ['ERP-100231', 'submitted'],
      ['ERP-100233', 'submitted'],
      ['ERP-100234', 'submitted'],
      ['ERP-100232', 'skipped'],
    ]);
    const jobs = await h.sandbox.admin.jobs();
    const sent = jobs.filter((j) => j.orderNumber?.startsWith('ERP-'));
    expect(sent.map((j) => j.orderNumber).sort()).toEqual(['ERP-100231', 'ERP-100233', 'ERP-100234']);
    const dresden = sent.find((j) => j.orderNumber === 'ERP-100231')?.request as {
      deliveryAddress?: { postalCode?: string; countryCodeISO2?: string };
    };
    expect(dresden.deliveryAddress).toMatchObject({ postalCode: '01099', countryCodeISO2: 'DE' });

    const rows = parse(await readFile(`${file}.result.csv`), { delimiter: ';', bom: true }) as string[][];
    expect(rows[0].slice(0, 8)).toEqual([
      'Auftragsnr',
      'Auftragsdatum',
      'Status',
      'Liefertermin',
      'Kunde',
      'Ansprechpartner',
      'Straße',
      'PLZ',
    ]);
    expect(rows[1][5]).toBe('Jürgen Müller');

    const again = await h.cli('run', [file], { mapping: MAPPING, env });
    expect(again.code, again.stderr).toBe(0);
    expect((await h.report(file)).jobs.map((j) => j.status)).toEqual([
      'already-submitted',
      'already-submitted',
      'already-submitted',
      'skipped',
    ]);
    expect((await h.sandbox.admin.jobs()).filter((j) => j.orderNumber?.startsWith('ERP-'))).toHaveLength(3);
  }, 60_000);

  it('the same export saved as .xlsx (numbers as numbers, dates as dates) plans the same orders with the same mapping', async () => {
    const text = iconv.decode(await readFile(SAMPLE), 'windows-1252');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Aufträge');
    // As Excel saves it: the PLZ a number, Liefertermin a date cell (read as 2026-12-04, which
    // the mapping's $date(…, "dd.mm.yyyy") takes too).
    const cellOf = (cell: string, c: number): string | number | Date => {
      const day = /^(\d{2})\.(\d{2})\.(\d{4})$/.exec(cell);
      if (c === 3 && day !== null) return new Date(Date.UTC(Number(day[3]), Number(day[2]) - 1, Number(day[1])));
      return c === 7 && /^\d+$/.test(cell) ? Number(cell) : cell;
    };
    for (const line of text.split('\r\n').filter((l) => l !== '')) ws.addRow(line.split(';').map(cellOf));
    const file = join(h.workDir, 'auftraege.xlsx');
    await wb.xlsx.writeFile(file);
    // delimiter and encoding say nothing about a workbook; the mapping is used as it is.
    const plan = await h.cli('plan', [file], { mapping: MAPPING });
    expect(plan.code, plan.stderr).toBe(0);
    expect(placed(await h.report(file)).map((j) => j.slice(0, 2))).toEqual([
      ['ERP-100231', 'valid'],
      ['ERP-100233', 'valid'],
      ['ERP-100234', 'valid'],
      ['ERP-100232', 'skipped'],
    ]);
    expect(plan.stderr).toContain(`${file}:2: PLZ: "1099" has four digits`);
    expect(placed(await h.report(file)).map((j) => j[2])).toEqual(['2026-12-04', '2026-12-07', '2026-12-10', null]);
  }, 60_000);
});
