import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { startWatch, waitFor, watchFixture } from '../support/watch-harness.js';

/** Shop exports with no --mapping: recognised by their header, or refused with one message and exit 2. */
const io = captureStdio();

let dir: string;
let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => {
  await h.sandbox.close();
});
beforeEach(async () => {
  dir = await tempDirPerTest('htorder-recognised-');
});

async function copySample(sample: string, to = dir): Promise<string> {
  const file = join(to, sample.split('/').pop() as string);
  await copyFile(join(ROOT, sample), file);
  return file;
}

/** The WooCommerce sample with `item_sku` renamed: near the woocommerce preset, not a match. */
async function nearWoo(to = dir): Promise<string> {
  const file = await copySample('samples/woocommerce/orders-export.csv', to);
  await writeFile(file, (await readFile(file, 'utf8')).replace(',item_sku,', ',sku,'));
  return file;
}

const NEAR = /this looks like a WooCommerce export, but its header lacks "item_sku".*use --mapping woocommerce/;

describe('check, plan and run with no --mapping', () => {
  it('check reads a Shopify export through the shopify preset, says so, and records it in result.json', async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    expect(await runCli(['check', file]), io.err).toBe(0);
    expect(io.err).toContain('read as a Shopify export (--mapping shopify; 19 of its columns matched)');
    const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8'));
    expect(report.mapping.preset).toBe('shopify');
    expect(report.mapping.matchedColumns).toContain('Lineitem sku');
  });

  it('run submits a recognised export once; a second run sends nothing', async () => {
    await h.reset();
    const file = await copySample('samples/woocommerce/orders-export.csv', h.workDir);
    const first = await h.cli('run', [file]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('read as a WooCommerce export');
    expect((await h.report(file)).mapping?.preset).toBe('woocommerce');
    const second = await h.cli('run', [file]);
    expect(second.code, second.stderr).toBe(0);
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual(['2051', '2054']);
  }, 60_000);

  it('a near match exits 2 with one message and writes no reports (check and plan)', async () => {
    const file = await nearWoo();
    expect(await runCli(['check', file])).toBe(2);
    expect(io.err).toMatch(NEAR);
    expect(io.err.split('\n').filter(Boolean)).toHaveLength(1);
    await h.reset();
    const plan = await h.cli('plan', [file]);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(NEAR);
    expect(await readdir(dir)).toEqual(['orders-export.csv']);
  });

  it('a file through the wrong preset gets one message naming the format it looks like, exit 2', async () => {
    const file = await copySample('samples/woocommerce/orders-export.csv');
    expect(await runCli(['check', '--mapping', 'shopify', file])).toBe(2);
    expect(io.err.trim()).toBe(
      `${file}: this looks like a WooCommerce export, which the mapping shopify does not read; use --mapping woocommerce (not checked, no reports written)`,
    );
  });
});

describe('spreadsheets', () => {
  it('an .xlsx export with the Shopify header is read through the shopify preset', async () => {
    const cells = parseCsv(await readFile(join(ROOT, 'samples/shopify/orders_export.csv'), 'utf8')) as string[][];
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Orders');
    for (const row of cells) ws.addRow(row);
    const file = join(dir, 'orders_export.xlsx');
    await wb.xlsx.writeFile(file);
    expect(await runCli(['check', file]), io.err).toBe(0);
    expect(io.err).toContain('read as a Shopify export');
    const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8'));
    expect(
      report.jobs
        .filter((j: { status: string }) => j.status === 'valid')
        .map((j: { orderNumber: string }) => j.orderNumber),
    ).toEqual(['#1041', '#1042', '#1044']);
  });
});

describe('watch with no mapping', () => {
  const fx = watchFixture('htorder-recognised-watch-');

  it('with routes: a route without a mapping recognises the export, a route naming one reads through it', async () => {
    const config = join(dir, 'htorder.yaml');
    await writeFile(config, 'routes:\n  - match: "woo-*.csv"\n    mapping: shopify\n  - match: "*"\n', { mode: 0o600 });
    const w = await startWatch({ target: fx.drop.path }, { ...fx.env, HTORDER_CONFIG: config });
    const ls = async (sub: string) => (await readdir(join(fx.drop.path, sub)).catch(() => [])).sort();
    try {
      await copySample('samples/woocommerce/orders-export.csv', fx.drop.path);
      await waitFor(async () => ((await ls('done')).includes('orders-export.csv') ? true : undefined), 'done/');
      const report = JSON.parse(await readFile(join(fx.drop.path, 'done', 'orders-export.csv.result.json'), 'utf8'));
      expect(report.mapping.preset).toBe('woocommerce');
      // The route's own mapping wins: a WooCommerce export through the Shopify preset fails, with one line.
      await copyFile(join(ROOT, 'samples/woocommerce/orders-export.csv'), join(fx.drop.path, 'woo-1.csv'));
      await waitFor(async () => ((await ls('failed')).includes('woo-1.csv') ? true : undefined), 'failed/');
      const why = await readFile(join(fx.drop.path, 'failed', 'woo-1.csv.errors.txt'), 'utf8');
      expect(why).toContain('this looks like a WooCommerce export, which the mapping shopify does not read');
    } finally {
      expect(await w.stop()).toBe(0);
    }
  }, 60_000);

  it('orders a recognised export and sets a near match aside in failed/ with the message', async () => {
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    const ls = async (sub: string) => (await readdir(join(fx.drop.path, sub)).catch(() => [])).sort();
    try {
      await copySample('samples/shopify/orders_export.csv', fx.drop.path);
      await waitFor(async () => ((await ls('done')).includes('orders_export.csv') ? true : undefined), 'done/');
      const report = JSON.parse(await readFile(join(fx.drop.path, 'done', 'orders_export.csv.result.json'), 'utf8'));
      expect(report.mapping.preset).toBe('shopify');
      await nearWoo(fx.drop.path);
      await waitFor(async () => ((await ls('failed')).includes('orders-export.csv') ? true : undefined), 'failed/');
      const why = await readFile(join(fx.drop.path, 'failed', 'orders-export.csv.errors.txt'), 'utf8');
      expect(why).toMatch(NEAR);
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect(w.logs().some((l) => (l.mapping as { preset?: string } | undefined)?.preset === 'shopify')).toBe(true);
  }, 60_000);
});
