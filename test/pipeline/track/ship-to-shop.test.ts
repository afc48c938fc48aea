import { copyFile, mkdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runTrack } from '../../../src/cli/commands/track.js';
import { bySku, carrierOf, trackingCsv, type DispatchRecord } from '../../../src/pipeline/track/shop-tracking.js';
import { ROOT } from '../../support/dist.js';
import { startLoopback } from '../../support/loopback-server.js';
import { PipelineHarness } from '../../support/pipeline-harness.js';
import { sink } from '../../support/sink.js';
import { ITEMS, manifest } from '../../support/yaml-manifests.js';

/** Tracking back to the shop: X.tracking.csv in the shop's import layout, and the dispatched webhook. */
let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

const HOUR = 3_600_000;

async function track(paths: string[], opts: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  const out = sink();
  const err = sink();
  const code = await runTrack(paths, opts, {
    stdout: out.stream,
    stderr: err.stream,
    env: { ...h.env(), ...env },
    cwd: h.workDir,
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

const rows = async (file: string): Promise<string[][]> =>
  parseCsv(await readFile(file, 'utf8'), { relax_column_count: false }) as string[][];

/** The Shopify sample run (no --mapping: recognised), its jobs then despatched on the sandbox clock. */
async function shopifyDespatched(): Promise<{ file: string; jobs: Map<string, number> }> {
  const file = join(h.workDir, 'orders_export.csv');
  await copyFile(join(ROOT, 'samples/shopify/orders_export.csv'), file);
  const r = await h.cli('run', [file]);
  expect(r.code, r.stderr).toBe(0);
  const jobs = new Map(
    (await h.report(file)).jobs.flatMap((j) => (j.jobNumber ? [[j.orderNumber!, j.jobNumber]] : [])),
  );
  expect([...jobs.keys()]).toEqual(['#1041', '#1042', '#1044']);
  // Received → Scheduled (1 h) → In Production (23 h) → Dispatched (24 h).
  await h.sandbox.admin.advanceClock(49 * HOUR);
  return { file, jobs };
}

describe('htorder track writes the tracking for the shop', () => {
  it('a submitted Shopify export: X.tracking.csv in the Matrixify layout, keyed by the shop order and SKU', async () => {
    const { file, jobs } = await shopifyDespatched();
    const t = await track([file]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toContain(`tracking for the shop: ${file}.tracking.csv`);
    const [header, ...body] = await rows(`${file}.tracking.csv`);
    expect(header).toEqual([
      'Name',
      'Command',
      'Line: Type',
      'Line: SKU',
      'Line: Quantity',
      'Fulfillment: Status',
      'Fulfillment: Tracking Company',
      'Fulfillment: Tracking Number',
      'Fulfillment: Tracking URL',
      'Fulfillment: Processed At',
      'Fulfillment: Send Receipt',
    ]);
    const a = jobs.get('#1041');
    const c = jobs.get('#1044');
    // #1041: two lines of one transfer (merged into one job line), its fee line left out.
    expect(body.filter((r) => r[0] === '#1041')).toEqual([
      [
        '#1041',
        'UPDATE',
        'Fulfillment Line',
        'A10001-M',
        '6',
        'success',
        'UPS',
        `UPSGND${a}1`,
        `https://track.sandbox.invalid/UPSGND/${a}1`,
        expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        'TRUE',
      ],
      [
        '#1041',
        'UPDATE',
        'Fulfillment Line',
        'A10001-L',
        '6',
        'success',
        'UPS',
        `UPSGND${a}1`,
        `https://track.sandbox.invalid/UPSGND/${a}1`,
        expect.any(String),
        'TRUE',
      ],
    ]);
    expect(body.find((r) => r[0] === '#1044')?.slice(6, 8)).toEqual(['UPS', `UPS2DA${c}1`]);
    expect(new Set(body.map((r) => r[0]))).toEqual(new Set(['#1041', '#1042', '#1044']));

    // A shop that emails its customers itself turns the receipt off.
    const off = await track([file], {}, { HTORDER_TRACKING_SEND_RECEIPT: 'false' });
    expect(off.code, off.stderr).toBe(0);
    const [, ...quiet] = await rows(`${file}.tracking.csv`);
    expect(new Set(quiet.map((r) => r[10]))).toEqual(new Set(['FALSE']));
  }, 60_000);

  it('nothing despatched yet: no tracking file; --tracking-csv gathers every report into one file', async () => {
    const yaml = await h.write('po.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [yaml])).code).toBe(0);
    const early = await track([yaml]);
    expect(early.code, early.stderr).toBe(0);
    expect(early.stderr).not.toContain('tracking for the shop');
    await h.sandbox.admin.advanceClock(49 * HOUR);
    const out = join(h.workDir, 'shipped.csv');
    const t = await track([yaml], { trackingCsv: out });
    expect(t.code, t.stderr).toBe(0);
    const [header, row] = await rows(out);
    expect(header.slice(0, 6)).toEqual(['shop_order', 'sku', 'quantity', 'carrier', 'tracking_number', 'tracking_url']);
    expect(row.slice(0, 4)).toEqual(['PO-1', '', '', 'UPS']);
  }, 60_000);

  it('a webhook receives dispatched once, with the shop order number and the tracking number', async () => {
    const hook = await startLoopback((_req, res) => {
      res.end('ok');
    });
    try {
      const { file, jobs } = await shopifyDespatched();
      const env = { HTORDER_NOTIFY_URL: `${hook.url}/hook`, HTORDER_NOTIFY_ON: 'dispatched' };
      expect((await track([file], {}, env)).code).toBe(0);
      const bodies = hook.seen.map((r) => JSON.parse(r.body) as { event: string; dispatch: Record<string, unknown> });
      expect(bodies.map((b) => b.dispatch.shopOrderNumber).sort()).toEqual(['#1041', '#1042', '#1044']);
      const a = jobs.get('#1041');
      expect(bodies.find((b) => b.dispatch.shopOrderNumber === '#1041')).toMatchObject({
        event: 'dispatched',
        dispatch: {
          orderNumber: '#1041',
          jobNumber: a,
          carrier: 'UPS',
          trackingNumber: `UPSGND${a}1`,
          skus: ['A10001-M', 'A10001-L'],
        },
      });
      // Told once: the report remembers the despatch.
      expect((await track([file], {}, env)).code).toBe(0);
      expect(hook.seen).toHaveLength(3);
    } finally {
      await hook.close();
    }
  }, 60_000);

  it('a tracking file that cannot be written is named (exit 2); the webhook still receives dispatched, once', async () => {
    const hook = await startLoopback((_req, res) => {
      res.end('ok');
    });
    try {
      const { file } = await shopifyDespatched();
      // A folder at X.tracking.csv's name: no rename can replace it.
      await mkdir(`${file}.tracking.csv`);
      const env = { HTORDER_NOTIFY_URL: `${hook.url}/hook`, HTORDER_NOTIFY_ON: 'dispatched' };
      const t = await track([file], {}, env);
      expect(t.code).toBe(2);
      expect(t.stderr).toContain(
        `htorder track: cannot write the tracking for the shop to ${file}.tracking.csv (EISDIR): move what is at that name, or make its folder writable; the reports hold the tracking\n`,
      );
      expect(t.stderr).not.toContain('    at ');
      expect(hook.seen).toHaveLength(3);
      // Once the folder is gone, the next check writes the file; the despatch is not told again.
      await rmdir(`${file}.tracking.csv`);
      const again = await track([file], {}, env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`tracking for the shop: ${file}.tracking.csv`);
      expect(hook.seen).toHaveLength(3);
      // One file for every report (--tracking-csv) that names a folder: the same.
      const one = await track([file], { trackingCsv: h.workDir }, env);
      expect(one.code).toBe(2);
      expect(one.stderr).toContain(`cannot write the tracking for the shop to ${h.workDir} (EISDIR)`);
    } finally {
      await hook.close();
    }
  }, 60_000);
});

describe('layouts', () => {
  const record: DispatchRecord = {
    orderNumber: '2051',
    shopOrderNumber: '2051',
    jobNumber: 700001,
    carrier: 'UPS',
    trackingNumber: '1Z999',
    trackingLink: 'https://t.example/1Z999',
    despatchDate: '2026-11-21',
    lines: [{ sku: 'A10001', quantity: '6' }],
  };

  it('WooCommerce: the Advanced Shipment Tracking import, day-first date, shipped status', () => {
    expect(trackingCsv('woocommerce', [record])).toBe(
      'order_id,tracking_provider,tracking_number,date_shipped,status_shipped,sku,qty\r\n2051,UPS,1Z999,21-11-2026,1,A10001,6\r\n',
    );
  });

  it('Shopify (Matrixify): a Fulfillment Line per SKU that emails the customer, unless told not to', () => {
    expect(trackingCsv('shopify', [record])).toBe(
      'Name,Command,Line: Type,Line: SKU,Line: Quantity,Fulfillment: Status,Fulfillment: Tracking Company,Fulfillment: Tracking Number,Fulfillment: Tracking URL,Fulfillment: Processed At,Fulfillment: Send Receipt\r\n' +
        '2051,UPDATE,Fulfillment Line,A10001,6,success,UPS,1Z999,https://t.example/1Z999,2026-11-21,TRUE\r\n',
    );
    expect(trackingCsv('shopify', [record], { sendReceipt: false })).toMatch(/,FALSE\r\n$/);
  });

  it('one row per shipment and SKU: lines of one SKU are one row, their quantities added', () => {
    const twice = {
      ...record,
      lines: [
        { sku: 'A10001', quantity: '6' },
        { sku: 'B2', quantity: '1' },
        { sku: 'A10001', quantity: '4' },
      ],
    };
    const two = { ...twice, trackingNumber: '1Z998' };
    for (const layout of ['shopify', 'woocommerce', 'generic'] as const) {
      const [header, ...body] = parseCsv(trackingCsv(layout, [twice, two])) as string[][];
      const sku = header!.findIndex((h) => ['Line: SKU', 'sku'].includes(h));
      const qty = header!.findIndex((h) => ['Line: Quantity', 'qty', 'quantity'].includes(h));
      const number = header!.findIndex((h) => ['Fulfillment: Tracking Number', 'tracking_number'].includes(h));
      expect(body.map((r) => [r[number], r[sku], r[qty]])).toEqual([
        ['1Z999', 'A10001', '10'],
        ['1Z999', 'B2', '1'],
        ['1Z998', 'A10001', '10'],
        ['1Z998', 'B2', '1'],
      ]);
    }
    expect(
      bySku([
        { sku: 'X', quantity: '2' },
        { sku: 'X', quantity: 'two' },
      ]),
    ).toEqual([{ sku: 'X', quantity: '' }]);
  });

  it('a cell from outside that would run as a formula is neutralised', () => {
    expect(trackingCsv('generic', [{ ...record, shopOrderNumber: '=HYPERLINK("x")', lines: [] }])).toContain(
      `"'=HYPERLINK(""x"")"`,
    );
  });

  it('a cell with a lone line break is quoted, and its next line guarded: no row starts with a formula', () => {
    const payload = "=cmd|' /C calc'!A0";
    for (const layout of ['shopify', 'woocommerce', 'generic'] as const) {
      for (const br of ['\n', '\r', '\r\n']) {
        const text = trackingCsv(layout, [
          { ...record, shopOrderNumber: `2051${br}${payload}`, lines: [{ sku: `A1${br}${payload}`, quantity: '6' }] },
        ]);
        expect(text.split(/\r\n|\r|\n/).filter((line) => /^[=+\-@]/.test(line))).toEqual([]);
        const rows = parseCsv(text) as string[][];
        expect(rows).toHaveLength(2);
        expect(rows[1]).toContain(`2051${br}'${payload}`);
        expect(rows[1]).toContain(`A1${br}'${payload}`);
      }
    }
  });

  it('the carrier is the known carrier a delivery option names, nothing for a collection', () => {
    expect(carrierOf('UPS 2nd Day Air')).toBe('UPS');
    expect(carrierOf('FedEx Overnight')).toBe('FedEx');
    expect(carrierOf('NZ Courier')).toBe('NZ Courier');
    expect(carrierOf('Customer Pickup', true)).toBe('');
  });
});
