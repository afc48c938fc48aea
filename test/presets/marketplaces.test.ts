import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';

/**
 * Marketplace reports and files re-saved by a spreadsheet, with no --mapping: Amazon's order
 * reports (tab-separated .txt) and eBay's Seller Hub orders report, as the platforms document
 * them and in their variants (optional columns absent, eBay.co.uk's words, a German Excel's `;`,
 * Windows-1252 and damage, Excel's "Unicode text"). Each is recognised, plans to exactly its
 * orders, runs once, and a re-run sends nothing.
 */
let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => {
  await h.sandbox.close();
});
beforeEach(async () => {
  await h.reset();
});

/** Amazon names service levels, not carriers: the shop's table in its config file. */
const AMAZON_METHODS =
  'deliveryMethods:\n  Standard: UPS Ground\n  Expedited: UPS 2nd Day Air\n  NextDay: FedEx Overnight\n';

const AMAZON_UNSHIPPED = {
  preset: 'amazon',
  placed: ['113-2041776-4412201', '113-5530184-0027706', '113-1120045-3398112'],
  skipped: ['113-5530184-0027706', '113-7781920-5540233', '113-9902113-6671045'],
  config: AMAZON_METHODS,
};
/** A multi-item order's summary row and its item without a SKU, an unpaid and a shipped order, the two footer lines. */
const EBAY_SAMPLE = {
  preset: 'ebay',
  placed: ['14-11872-30291', '22-11873-44120'],
  skipped: ['22-11873-44120', '22-11873-44120', '05-11874-90017', '09-11869-22304', null, null],
};

interface Case {
  name: string;
  file: string;
  preset: string;
  placed: string[];
  /** Skipped jobs by order number; rows with none (a report's footer) as null. */
  skipped: Array<string | null>;
  /** The config file (the shop's delivery-method names), when the export needs one. */
  config?: string;
  /** The sandbox account, when not us-demo. */
  account?: string;
}

const CASES: Case[] = [
  {
    name: 'Amazon Unshipped Orders (the sample)',
    file: 'samples/amazon/unshipped-orders-2026-11-22.txt',
    ...AMAZON_UNSHIPPED,
  },
  {
    name: 'Amazon Order Report ("New Orders"; optional columns absent, a continuation row)',
    file: 'test/presets/fixtures/amazon-order-report.txt',
    preset: 'amazon',
    placed: ['114-3309182-7751024', '114-2207715-6610938'],
    skipped: ['114-3309182-7751024', '114-8850213-0093367'],
    config: AMAZON_METHODS,
  },
  {
    name: 'Amazon Unshipped Orders re-saved by a German Excel (;, Windows-1252, WAHR/FALSCH)',
    file: 'test/presets/fixtures/amazon-unshipped-excel-de.csv',
    ...AMAZON_UNSHIPPED,
  },
  {
    name: 'Amazon Unshipped Orders saved as Excel "Unicode text" (UTF-16 LE, tabs)',
    file: 'test/presets/fixtures/amazon-unshipped-unicode.txt',
    ...AMAZON_UNSHIPPED,
  },
  {
    name: 'eBay Seller Hub orders report (the sample)',
    file: 'samples/ebay/orders-report-2026-11-22.csv',
    ...EBAY_SAMPLE,
  },
  {
    name: 'eBay orders report re-saved by a German Excel (;, Windows-1252, padded rows, scientific numbers)',
    file: 'test/presets/fixtures/ebay-orders-excel-de.csv',
    ...EBAY_SAMPLE,
  },
  {
    name: 'eBay.co.uk orders report ("Post to …")',
    file: 'test/presets/fixtures/ebay-orders-uk.csv',
    preset: 'ebay',
    placed: ['04-15250-08826', '24-15229-61546'],
    skipped: ['24-15229-61546', '11-15231-00420', null, null],
    account: 'uk-demo',
  },
];

const withStatus = (r: { jobs: Array<{ orderNumber: string | null; status: string }> }, status: string) =>
  r.jobs.filter((j) => j.status === status).map((j) => j.orderNumber);

describe.each(CASES)('$name', ({ file: sample, preset, placed, skipped, config, account }) => {
  it('is recognised, plans exactly its orders, runs once, and a re-run sends nothing', async () => {
    const file = join(h.workDir, sample.split('/').pop() as string);
    await copyFile(join(ROOT, sample), file);
    const env = {
      ...(account === undefined ? {} : h.env(account)),
      ...(config === undefined ? {} : { HTORDER_CONFIG: await h.write('htorder.config.yaml', config) }),
    };
    const plan = await h.cli('plan', [file], { env });
    expect(plan.code, plan.stderr + plan.stdout).toBe(0);
    const planned = await h.report(file);
    expect(planned.mapping?.preset).toBe(preset);
    expect(withStatus(planned, 'valid')).toEqual(placed);
    expect(withStatus(planned, 'skipped')).toEqual(skipped);
    for (const j of planned.jobs.filter((x) => x.status === 'skipped')) expect(j.reason).toBeTruthy();

    const first = await h.cli('run', [file], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(withStatus(await h.report(file), 'submitted')).toEqual(placed);
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual([...placed].sort());
    const second = await h.cli('run', [file], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(withStatus(await h.report(file), 'already-submitted')).toEqual(placed);
    expect(await h.sandbox.admin.jobs()).toHaveLength(placed.length);
  }, 60_000);
});

describe('what the marketplace presets make of the rows', () => {
  const load = async (sample: string) => {
    const { loadManifest } = await import('../../src/manifest/load-manifest.js');
    return loadManifest(join(ROOT, sample));
  };

  it('Amazon: what is still to ship, the address lines joined, the business order its PO', async () => {
    const r = await load('samples/amazon/unshipped-orders-2026-11-22.txt');
    const [austin, boston, denver] = r.manifest?.jobs ?? [];
    expect(austin.deliveryAddress).toMatchObject({
      deliveryMethod: 'Standard',
      contactName: 'Dana Whitfield',
      phone: '+1 512-555-0147',
      streetAddress: '410 W 2nd St',
      address2: 'Suite 200',
      postalCode: '78701-4123',
      country: 'US',
    });
    expect(austin.items).toMatchObject([
      { itemType: 'Asset', code: 'A10001', quantity: 12 },
      { itemType: 'Stock', code: 'GD5000', variantCode: 'GD5000-BLK', sizeQuantities: { L: 12 } },
    ]);
    // 20 bought, 8 shipped: 12 to make; the line already shipped is skipped.
    expect(boston.items).toMatchObject([{ code: 'A10001', quantity: 12 }]);
    expect(denver.orderComment).toBe('Customer PO RYS-PO-4471');
  });

  it('German Excel: the same orders, umlauts decoded, damage warned about at its row and column', async () => {
    const amazon = await load('test/presets/fixtures/amazon-unshipped-excel-de.csv');
    expect(amazon.manifest?.csv?.read).toEqual({ delimiter: ';', encoding: 'windows-1252' });
    expect(amazon.manifest?.jobs[0].deliveryAddress.contactName).toBe('Jürgen Groß');
    expect(amazon.diagnostics).toEqual([]);

    const ebay = await load('test/presets/fixtures/ebay-orders-excel-de.csv');
    const [denver, boston] = ebay.manifest?.jobs ?? [];
    expect(denver.deliveryAddress.contactName).toBe('Jürgen Müller');
    expect(boston.deliveryAddress).toMatchObject({ postalCode: '02134', city: 'Boston' });
    expect(boston.deliveryAddress.phone).toBeUndefined();
    expect(ebay.diagnostics.map((d) => `${d.severity} ${d.code} ${d.source?.row}:${d.source?.columnName}`)).toEqual([
      // Named at the summary row they are written on, not at the item row that took them from it.
      'warning postal-code.leading-zero 5:Ship To Zip',
      'warning phone.scientific 5:Ship To Phone',
    ]);
  });

  it("eBay: the summary row's address reaches its items; sizes from the variation", async () => {
    const r = await load('samples/ebay/orders-report-2026-11-22.csv');
    const team = r.manifest?.jobs[1];
    expect(team?.deliveryAddress).toMatchObject({
      deliveryMethod: 'UPS 2nd Day Air',
      contactName: 'Kit Moreno',
      streetAddress: '22 Oak Ave',
      address2: 'Gym office',
      postalCode: '43215',
      country: 'United States',
    });
    expect(team?.items).toMatchObject([
      { itemType: 'Asset', code: 'A10001', quantity: 12 },
      { itemType: 'Stock', code: 'GD5000', variantCode: 'GD5000-WHT', sizeQuantities: { XL: 12 } },
    ]);
    expect(r.manifest?.skipped?.map((s) => s.reason)).toEqual([
      "the order's summary row (its items are on the rows under it)",
      'not goods (an item without a Custom Label, the SKU it is ordered by)',
      'not paid on eBay (no Paid On Date)',
      'already shipped on eBay (Shipped On Date)',
      "the report's footer line, not an order",
      "the report's footer line, not an order",
    ]);
  });

  it('result.csv of a tab-separated report is comma-separated, its own columns first', async () => {
    await h.reset();
    const file = join(h.workDir, 'unshipped.txt');
    await copyFile(join(ROOT, 'samples/amazon/unshipped-orders-2026-11-22.txt'), file);
    const r = await h.cli('plan', [file], { env: { HTORDER_CONFIG: await h.write('c.yaml', AMAZON_METHODS) } });
    expect(r.code, r.stderr).toBe(0);
    const csv = await readFile(`${file}.result.csv`, 'utf8');
    expect(csv.split('\n')[0]).toMatch(/^\uFEFForder-id,order-item-id,.*,_row,_status,/);
    expect(csv).toContain('"Falcons Crest Iron-On Transfer, 10"" x 10"", Full Colour - M"');
  });
});

describe('a shop export re-saved by Excel, with or without its mapping', () => {
  /** The Shopify sample as a German Excel saves it: `;` between cells, Windows-1252. */
  async function shopifyResaved(delimiter: string): Promise<string> {
    const { parse } = await import('csv-parse/sync');
    const { stringify } = await import('csv-stringify/sync');
    const iconv = (await import('iconv-lite')).default;
    const rows = parse(await readFile(join(ROOT, 'samples/shopify/orders_export.csv'))) as string[][];
    const file = join(h.workDir, 'orders_export.csv');
    await writeFile(file, iconv.encode(stringify(rows, { delimiter, record_delimiter: 'windows' }), 'windows-1252'));
    return file;
  }

  it('`;` and Windows-1252: the same orders as the sample, with --mapping shopify or none', async () => {
    const file = await shopifyResaved(';');
    for (const mapping of ['shopify', undefined]) {
      const r = await h.cli('plan', [file], mapping === undefined ? {} : { mapping });
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(withStatus(await h.report(file), 'valid')).toEqual(['#1041', '#1042', '#1044']);
      expect(r.stdout).not.toContain('no order number');
    }
  });

  it('rows a mapping cannot read are errors, never "skipped" with a 0.00 total', async () => {
    const file = await shopifyResaved('|');
    const r = await h.cli('plan', [file], { mapping: 'shopify' });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).not.toMatch(/skipped|estimated total/);
    expect(r.stderr).toContain('the header reads as one column: the file looks separated by "|"');
  });

  it('a .txt export is read through a mapping that sets its delimiter', async () => {
    const file = join(h.workDir, 'export.txt');
    await copyFile(join(ROOT, 'samples/erp/export.csv'), file);
    const r = await h.cli('plan', [file], { mapping: join(ROOT, 'samples/erp/mapping.yaml') });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(withStatus(await h.report(file), 'valid')).toEqual(['RO-24051', 'RO-24052']);
  });
});
