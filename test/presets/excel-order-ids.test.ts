import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';

/**
 * A Squarespace export opened in Excel and saved again: its order IDs lose their leading zeros
 * (`00412` → `412`). The ledger knows the orders by `00412`, so a re-saved export of orders
 * already sent must not send them again under the shorter number, whenever it is run.
 */
let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

const SAMPLE = join(ROOT, 'samples/squarespace/orders.csv');
/** The suspected-duplicate guard as shipped (the harness turns it off). */
const GUARD = { HTORDER_DUPLICATE_WINDOW: '12h' };

/** The sample as Excel writes it back: every order ID read as a number. */
async function excelCsv(name: string): Promise<string> {
  const rows = parseCsv(await readFile(SAMPLE, 'utf8')) as string[][];
  const text = rows.map((r, i) => (i === 0 ? r : [String(Number(r[0])), ...r.slice(1)]));
  const file = join(h.workDir, name);
  await writeFile(
    file,
    `${text.map((r) => r.map((c) => (/[",]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(',')).join('\r\n')}\r\n`,
  );
  return file;
}

/** The sample saved by Excel as a workbook: the order IDs number cells. */
async function excelWorkbook(name: string): Promise<string> {
  const rows = parseCsv(await readFile(SAMPLE, 'utf8')) as string[][];
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('orders');
  for (const [i, r] of rows.entries()) ws.addRow(i === 0 ? r : [Number(r[0]), ...r.slice(1)]);
  const file = join(h.workDir, name);
  await wb.xlsx.writeFile(file);
  return file;
}

const created = async (): Promise<number> => (await h.sandbox.admin.jobs()).length;

async function sendOriginal(): Promise<void> {
  const file = join(h.workDir, 'orders.csv');
  await copyFile(SAMPLE, file);
  const first = await h.cli('run', [file], { env: GUARD });
  expect(first.code, first.stderr).toBe(0);
  expect(await created()).toBe(2);
}

describe('a Squarespace export re-saved by Excel (order IDs without their leading zeros)', () => {
  for (const [when, offset] of [
    ['the same night', '0'],
    ['a day later, past the suspected-duplicate window', '1d'],
  ] as const) {
    it(`sends nothing again ${when}: the IDs are read with their zeros, and a warning names file, row and column`, async () => {
      await sendOriginal();
      const file = await excelCsv('orders-resaved.csv');
      const again = await h.cli('run', [file], { env: { ...GUARD, HTORDER_CLOCK_OFFSET: offset } });
      expect(await created()).toBe(2);
      expect(again.code, again.stderr).toBe(0);
      const jobs = (await h.report(file)).jobs.filter((j) => j.status !== 'skipped');
      expect(jobs.map((j) => [j.orderNumber, j.status])).toEqual([
        ['00412', 'already-submitted'],
        ['00414', 'already-submitted'],
      ]);
      expect(again.stderr).toMatch(
        /orders-resaved\.csv:2: Order ID: "412" has three digits; this export writes Order ID with at least five digits \(the squarespace preset\), so a spreadsheet dropped its leading zeros: read as "00412"\. Export again without opening the file/,
      );
    });
  }

  it('saved as a workbook, its order IDs number cells: read with their zeros too', async () => {
    await sendOriginal();
    const file = await excelWorkbook('orders.xlsx');
    const again = await h.cli('run', [file], { env: GUARD, mapping: 'squarespace' });
    expect(await created()).toBe(2);
    expect(again.code, again.stderr).toBe(0);
    expect((await h.report(file)).jobs.filter((j) => j.status !== 'skipped').map((j) => j.orderNumber)).toEqual([
      '00412',
      '00414',
    ]);
    expect(again.stderr).toMatch(/orders\.xlsx:5: Order ID: "414" has three digits/);
  });

  it('order IDs of five digits or more, and the original export, are read as they are, without a warning', async () => {
    const file = join(h.workDir, 'orders.csv');
    const text = (await readFile(SAMPLE, 'utf8')).replaceAll(/^00412,/gm, '100412,');
    await writeFile(file, text);
    const r = await h.cli('plan', [file], { env: GUARD });
    expect(r.code, r.stderr).toBe(0);
    expect((await h.report(file)).jobs.filter((j) => j.status === 'valid').map((j) => j.orderNumber)).toEqual([
      '100412',
      '00414',
    ]);
    expect(r.stderr).not.toMatch(/leading zeros/);
  });
});
