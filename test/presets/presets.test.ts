import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * Issue 14: real shop and ERP exports through the shipped presets (`--mapping shopify`, …) and
 * through a user mapping that extends one, checked, planned and run against the sandbox.
 */
const io = captureStdio();

interface Report {
  jobs: Array<{ orderNumber: string | null; status: string; reason?: string; items: Array<Record<string, unknown>> }>;
}

/**
 * One sample per platform in the platform's own columns. `mapping`: what `--mapping` names (the
 * preset, unless the export needs a setting the preset cannot know, such as Etsy's delivery).
 */
const CASES = [
  {
    name: 'shopify',
    mapping: 'shopify',
    sample: 'samples/shopify/orders_export.csv',
    placed: ['#1041', '#1042', '#1044'],
    skipped: ['#1041', '#1043'],
  },
  {
    name: 'woocommerce (Customer/Order/Coupon Export, one row per item)',
    mapping: 'woocommerce',
    sample: 'samples/woocommerce/orders-export.csv',
    placed: ['2051', '2054'],
    skipped: ['2052', '2053'],
  },
  {
    name: 'woocommerce (WebToffee Order Export & Import, one row per order)',
    mapping: 'woocommerce',
    sample: 'samples/woocommerce-webtoffee/order-export.csv',
    placed: ['3101', '3103'],
    skipped: ['3102', '3103'],
  },
  {
    name: 'woocommerce (Advanced Order Export For WooCommerce, its default fields)',
    mapping: 'woocommerce',
    sample: 'samples/woocommerce-algolplus/orders.csv',
    placed: ['4201', '4203'],
    skipped: ['4202', '4203'],
  },
  {
    name: 'odoo (17)',
    mapping: 'odoo',
    sample: 'samples/odoo/sale.order.csv',
    placed: ['S00041', 'S00044'],
    skipped: ['S00041', 'S00042', 'S00043', 'S00044'],
  },
  {
    name: 'odoo (16 labels)',
    mapping: 'odoo',
    sample: 'test/presets/fixtures/odoo16-sale.order.csv',
    placed: ['S00041', 'S00044'],
    skipped: ['S00041', 'S00042', 'S00043', 'S00044'],
  },
  {
    name: 'bigcommerce',
    mapping: 'bigcommerce',
    sample: 'samples/bigcommerce/orders-2026-11-22.csv',
    placed: ['118', '120'],
    skipped: ['119', '120'],
  },
  {
    name: 'etsy',
    mapping: 'samples/etsy/mapping.yaml',
    sample: 'samples/etsy/EtsySoldOrderItems2026-11.csv',
    placed: ['3412876590', '3413001277'],
    skipped: ['3412876590'],
  },
  {
    name: 'squarespace',
    mapping: 'squarespace',
    sample: 'samples/squarespace/orders.csv',
    placed: ['00412', '00414'],
    skipped: ['00413', '00414'],
  },
  {
    name: 'wix',
    mapping: 'wix',
    sample: 'samples/wix/orders.csv',
    placed: ['10023', '10025'],
    skipped: ['10024', '10025'],
  },
];

let dir: string;
let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => {
  await h.sandbox.close();
});
let stateBefore: string | undefined;
beforeEach(async () => {
  dir = await tempDirPerTest('htorder-presets-');
  stateBefore = process.env.HTORDER_STATE_DIR;
  process.env.HTORDER_STATE_DIR = join(dir, 'state');
});
afterEach(() => {
  if (stateBefore === undefined) delete process.env.HTORDER_STATE_DIR;
  else process.env.HTORDER_STATE_DIR = stateBefore;
});

async function copySample(sample: string): Promise<string> {
  const file = join(dir, sample.split('/').pop() as string);
  await copyFile(join(ROOT, sample), file);
  return file;
}

const report = async (file: string): Promise<Report> => JSON.parse(await readFile(`${file}.result.json`, 'utf8'));
const withStatus = (r: Report, status: string) => r.jobs.filter((j) => j.status === status).map((j) => j.orderNumber);

describe.each(CASES)('$name', ({ mapping, sample, placed, skipped }) => {
  const preset = mapping.includes('/') ? join(ROOT, mapping) : mapping;
  it('check explains every skipped row and exits 0', async () => {
    const file = await copySample(sample);
    expect(await runCli(['check', '--mapping', preset, file]), io.err).toBe(0);
    const r = await report(file);
    expect(withStatus(r, 'valid')).toEqual(placed);
    expect(withStatus(r, 'skipped')).toEqual(skipped);
    for (const j of r.jobs.filter((x) => x.status === 'skipped')) expect(j.reason).toBeTruthy();
    expect(io.err).toMatch(/skipped: .*:\d+ \(order /);
    // result.csv: every row has a status; skipped rows say why, merged rows share their line's.
    const lines = parseCsv(await readFile(`${file}.result.csv`, 'utf8'), { bom: true }) as string[][];
    const head = lines[0];
    const status = head.indexOf('_status');
    const why = head.indexOf('_error');
    for (const cells of lines.slice(1)) expect(['valid', 'skipped']).toContain(cells[status]);
    for (const cells of lines.slice(1).filter((c) => c[status] === 'skipped')) expect(cells[why]).not.toBe('');
  });

  it('plan shows exactly the orders to place; run submits them once; a second run sends nothing', async () => {
    const file = await copySample(sample);
    expect(await runCli(['plan', '--sandbox', '--mapping', preset, file]), io.err).toBe(0);
    expect(withStatus(await report(file), 'valid')).toEqual(placed);
    // run twice against one sandbox and one ledger: the orders are sent once.
    await h.reset();
    const created = async () => (await h.sandbox.admin.jobs()).length;
    const first = await h.cli('run', [file], { mapping: preset });
    expect(first.code, first.stderr).toBe(0);
    expect(withStatus(await report(file), 'submitted')).toEqual(placed);
    expect(await created()).toBe(placed.length);
    const second = await h.cli('run', [file], { mapping: preset });
    expect(second.code, second.stderr).toBe(0);
    expect(await created()).toBe(placed.length);
    const again = await report(file);
    expect(withStatus(again, 'submitted')).toEqual([]);
    expect(withStatus(again, 'already-submitted')).toEqual(placed);
  }, 60_000);
});

describe('what the presets make of the rows', () => {
  const manifestOf = async (file: string, preset: string) => {
    const { loadMapping } = await import('../../src/manifest/mapping/load-mapping.js');
    const { loadManifest } = await import('../../src/manifest/load-manifest.js');
    return loadManifest(file, { mapping: await loadMapping(preset) });
  };

  it('optional columns may be absent: a WooCommerce export without shipping_phone plans the same orders', async () => {
    const file = await copySample('samples/woocommerce/orders-export.csv');
    const rows = parseCsv(await readFile(file, 'utf8')) as string[][];
    const drop = rows[0].indexOf('shipping_phone');
    await writeFile(file, `${rows.map((r) => r.filter((_, i) => i !== drop).join(',')).join('\n')}\n`);
    expect(await runCli(['check', '--mapping', 'woocommerce', file]), io.err).toBe(0);
    expect(withStatus(await report(file), 'valid')).toEqual(['2051', '2054']);
  });

  it('run: a row whose order number is blank is refused by its row and column, not an internal error', async () => {
    const file = await copySample('samples/woocommerce/orders-export.csv');
    // Order 2054's number cell emptied, as a hand edit of the export leaves it.
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^2054,2054,/m, '2054,,'));
    await h.reset();
    const run = await h.cli('run', [file], { mapping: 'woocommerce' });
    expect(run.stderr).not.toMatch(/internal error/);
    expect(run.code, run.stderr).toBe(1);
    // All or nothing: the valid order waits for the file's fix.
    expect(withStatus(await report(file), 'not-submitted')).toEqual(['2051']);
    expect(await readFile(`${file}.errors.txt`, 'utf8')).toMatch(
      /:7: order_number: missing required field "orderNumber"/,
    );
  }, 60_000);

  it("Shopify: the shop's order name and shipping method are kept", async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    const { manifest } = await manifestOf(file, 'shopify');
    const jobs = manifest?.jobs ?? [];
    expect(jobs.map((j) => [j.orderNumber, j.deliveryAddress?.deliveryMethod])).toEqual([
      ['#1041', 'UPS Ground'],
      ['#1042', 'UPS Ground'],
      ['#1044', 'UPS 2nd Day Air'],
    ]);
  });

  it("Shopify: the apostrophe Shopify writes before a ZIP ('02134) is not part of the postal code", async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    // As Shopify writes them: `'02134`, `'78701` (the sample's 2134 is a spreadsheet's re-save).
    const text = (await readFile(file, 'utf8')).replace(/,(\d{4,5}),(MA|TX),/g, (_, zip: string, state: string) => {
      return `,'${zip.padStart(5, '0')},${state},`;
    });
    expect(text).toContain(",'02134,MA,");
    await writeFile(file, text);
    const { manifest } = await manifestOf(file, 'shopify');
    expect(manifest?.jobs.map((j) => j.deliveryAddress?.postalCode)).toEqual(['02134', '78701', '75201']);
  });

  it('a message about a postal code names the ZIP column, not the country column its expression tests first', async () => {
    const file = await copySample('samples/woocommerce/orders-export.csv');
    // Order 2051 shipped to Dresden, its PLZ 01099 saved by a spreadsheet as 1099.
    await writeFile(file, (await readFile(file, 'utf8')).replaceAll(',77002,Houston,TX,US,', ',1099,Dresden,,DE,'));
    const { diagnostics } = await manifestOf(file, 'woocommerce');
    const zip = diagnostics.filter((d) => d.code === 'postal-code.leading-zero');
    expect(zip.map((d) => [d.source?.row, d.source?.columnName])).toEqual([[2, 'shipping_postcode']]);
  });

  it("a quantity the preset cannot read on a sized line is named by the quantity's column, not the SKU's", async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    // #1042's first line, GD5000-BLK-M (a size, so its quantity would go to sizeQuantities).
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace(
        ',12,Gildan 5000 Tee - Black / M,',
        ',twelve,Gildan 5000 Tee - Black / M,',
      ),
    );
    const { diagnostics } = await manifestOf(file, 'shopify');
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((d) => [d.source?.row, d.source?.columnName])).toEqual(
      errors.map(() => [5, 'Lineitem quantity']),
    );
  });

  it('Odoo 17: the display name split into company and contact, the size read off the reference', async () => {
    const file = await copySample('samples/odoo/sale.order.csv');
    const { manifest } = await manifestOf(file, 'odoo');
    const first = manifest?.jobs[0];
    expect(first?.deliveryAddress).toMatchObject({
      contactName: 'Ann Lee',
      organisation: 'Tigers FC',
      postalCode: '78205',
      deliveryMethod: 'UPS Ground',
    });
    expect(first?.items[1]).toMatchObject({
      itemType: 'Stock',
      code: 'GD5000',
      variantCode: 'GD5000-BLK',
      sizeQuantities: { M: 12, L: 8 },
    });
  });

  it('Odoo 17 re-saved by a German Excel (;, Windows-1252, 04.12.2026 17:00): the same orders and due dates', async () => {
    const file = await copySample('test/presets/fixtures/odoo17-excel-de.csv');
    const { manifest, diagnostics } = await manifestOf(file, 'odoo');
    expect(diagnostics).toEqual([]);
    expect(manifest?.jobs.map((j) => [j.orderNumber, j.dateDue])).toEqual([
      ['S00041', '2026-12-04'],
      ['S00044', '2026-12-11'],
    ]);
    expect(manifest?.jobs[0].items[1]).toMatchObject({ code: 'GD5000', sizeQuantities: { M: 12, L: 8 } });
  });

  it('Odoo: a due date in no known form is the one error of its order, not also its sized transfer line', async () => {
    const file = await copySample('samples/odoo/sale.order.csv');
    await writeFile(file, (await readFile(file, 'utf8')).replace('"2026-12-04 17:00:00"', '"12/4/2026 17:00"'));
    const { manifest, diagnostics } = await manifestOf(file, 'odoo');
    expect(diagnostics.map((d) => [d.source?.row, d.source?.columnName])).toEqual([
      [2, 'Delivery Date'],
      [2, 'Delivery Date'],
    ]);
    expect(manifest?.jobs[0].items[0]).toMatchObject({
      code: 'A10001',
      quantity: 24,
      comment: expect.stringContaining('sizes: M 24'),
    });
  });

  it('an export whose every order is skipped is not "a file with no rows": exit 0, each skip reported', async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    const lines = (await readFile(file, 'utf8')).split('\n');
    await writeFile(file, `${[lines[0], ...lines.filter((l) => l.startsWith('#1043'))].join('\n')}\n`);
    expect(await runCli(['check', '--mapping', 'shopify', file]), io.err).toBe(0);
    expect(io.err).not.toMatch(/no rows/);
    expect(withStatus(await report(file), 'skipped')).toEqual(['#1043']);
    const run = await h.cli('run', [file], { mapping: 'shopify' });
    expect(run.code, run.stderr).toBe(0);
    expect(withStatus(await report(file), 'skipped')).toEqual(['#1043']);
  }, 60_000);

  it('the plan table tells a skipped line of a placed order from a skipped order', async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    const plan = await h.cli('plan', [file], { mapping: 'shopify' });
    expect(plan.code, plan.stderr).toBe(0);
    const table = plan.stdout + plan.stderr;
    expect(table).toMatch(/#1041\s+1\s+-\s+line skipped/);
    expect(table).toMatch(/#1043\s+1\s+-\s+skipped/);
  }, 60_000);

  it('a mapping naming a column the export lacks: exit 2, the column suggested, each message once', async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    const bad = join(dir, 'typo.yaml');
    await writeFile(bad, 'extends: shopify\nfields:\n  orderComment: "`Shiping Method`"\n');
    expect(await runCli(['check', '--mapping', bad, file])).toBe(2);
    expect(io.err).toMatch(/"Shiping Method", which is not in the header .*; did you mean "Shipping Method"\?/);
    await writeFile(bad, 'extends: shopify\nfields:\n  delivery: Name\n');
    expect(await runCli(['check', '--mapping', bad, file])).toBe(2);
    expect(io.err.match(/"delivery" is not a template field/g)).toHaveLength(1);
    expect(await runCli(['check', '--mapping', 'shopfy', file])).toBe(2);
    expect(io.err).toMatch(
      /--mapping shopfy: neither a preset \(amazon, bigcommerce, ebay, etsy, odoo, .*\) nor a mapping file; did you mean "shopify"\?/,
    );
  });
  it('Shopify: 6 + 6 of one asset merged to 12, the lost zero of a ZIP restored, sizes as sizeQuantities', async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    expect(await runCli(['plan', '--sandbox', '--mapping', 'shopify', file]), io.err).toBe(0);
    const r = await report(file);
    const first = r.jobs.find((j) => j.orderNumber === '#1041' && j.status === 'valid');
    expect(first?.items).toMatchObject([{ itemType: 'Asset', code: 'A10001', quantity: 12 }]);
    const stock = r.jobs.find((j) => j.orderNumber === '#1042');
    expect(stock?.items).toMatchObject([{ itemType: 'Stock', code: 'GD5000', quantity: 22 }]);
    expect(await readFile(`${file}.result.json`, 'utf8')).not.toContain('jobs[');
  }, 60_000);

  it('a user mapping extends a preset with its own order numbers and a SKU lookup table', async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    const text = (await readFile(file, 'utf8'))
      .replaceAll('A10001-M', 'TIG-CREST-M')
      .replaceAll('A10001-L', 'TIG-CREST-L');
    await writeFile(file, text);
    await writeFile(
      join(dir, 'skus.csv'),
      'sku,itemType,code,size\nTIG-CREST-M,Asset,A10001,M\nTIG-CREST-L,Asset,A10001,L\n',
    );
    const mapping = join(dir, 'shop1.yaml');
    await writeFile(
      mapping,
      [
        'extends: shopify',
        'lookups:',
        '  skus: { file: skus.csv, key: sku }',
        'fields:',
        '  orderNumber: \'"SHOP1-" & $substringAfter(Name, "#")\'',
        '  itemType: \'($l := $lookup("skus", `Lineitem sku`, "itemType"); $l ? $l : ($contains(`Lineitem sku`, /^A\\d/) ? "Asset" : "Stock"))\'',
        '  code: \'($l := $lookup("skus", `Lineitem sku`, "code"); $l ? $l : $substringBefore($replace(`Lineitem sku`, /-(S|M|L|XL)$/, ""), "-"))\'',
        '  variantCode: \'$lookup("skus", `Lineitem sku`) ? "" : ($b := $replace(`Lineitem sku`, /-(S|M|L|XL)$/, ""); $contains($b, "-") ? $b : "")\'',
        '',
      ].join('\n'),
    );
    expect(await runCli(['plan', '--sandbox', '--mapping', mapping, file]), io.err).toBe(0);
    const r = await report(file);
    expect(withStatus(r, 'valid')).toEqual(['SHOP1-1041', 'SHOP1-1042', 'SHOP1-1044']);
    expect(r.jobs[0].items).toMatchObject([{ itemType: 'Asset', code: 'A10001', quantity: 12 }]);
  }, 60_000);

  it('a bad expression, a missing lookup file and an unknown column are located in the mapping', async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'extends: shopify\nfields:\n  orderNumber: \'"X-" & (Name\'\n');
    expect(await runCli(['check', '--mapping', bad, file])).toBe(2);
    expect(io.err).toMatch(/bad\.yaml:3:\d+: fields\.orderNumber: bad expression/);
    await writeFile(bad, 'extends: shopify\nlookups:\n  skus: { file: nowhere.csv }\n');
    expect(await runCli(['check', '--mapping', bad, file])).toBe(2);
    expect(io.err).toMatch(/bad\.yaml:3:\d+: lookups\.skus\.file: lookup file "nowhere\.csv" does not exist/);
    await writeFile(bad, 'extends: shopify\nfields:\n  comment: "`Lineitem colour`"\n');
    // The mapping does not fit the file: a configuration error (docs/commands.md#exit-codes).
    expect(await runCli(['check', '--mapping', bad, file])).toBe(2);
    expect(io.err).toMatch(/bad\.yaml:3:\d+: .*"Lineitem colour", which is not in the header/);
  });

  it('a value the export gets wrong is named by its row and column', async () => {
    const file = await copySample('samples/shopify/orders_export.csv');
    await writeFile(file, (await readFile(file, 'utf8')).replace(',20,Team Tee', ',twenty,Team Tee'));
    expect(await runCli(['check', '--mapping', 'shopify', file])).toBe(1);
    expect(io.err).toMatch(/orders_export\.csv:8: Lineitem quantity: quantity: "twenty" is not a number/);
  });
});
