import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';

/**
 * Forms of shop exports as the platforms write them, with no --mapping: Wix's ISO 3166 codes,
 * WebToffee's packed shipping method, Odoo's formula-guarded cells and its import-compatible
 * export. Each is recognised, plans exactly its orders, runs once, and a second run sends nothing.
 */
interface Sent {
  orderNumber: string;
  request: { description?: string; deliveryAddress: Record<string, string> };
}

const CASES: Array<{
  name: string;
  fixture: string;
  platform: string;
  placed: string[];
  config?: string;
  env?: Record<string, string>;
  sent: Record<string, Record<string, unknown>>;
}> = [
  {
    name: 'Wix: ISO 3166-2 states and alpha-3 countries (US ZIP padded by the normalised country)',
    fixture: 'wix-iso-codes.csv',
    platform: 'Wix',
    placed: ['20031', '20032', '20034'],
    sent: {
      '20031': { deliveryAddress: { countryCodeISO2: 'US', state: 'ME', postalCode: '04101' } },
      '20032': { deliveryAddress: { countryCodeISO2: 'CA', state: 'ON', postalCode: 'M5V 2T6' } },
      '20034': { deliveryAddress: { countryCodeISO2: 'US', state: 'NY', deliveryMethod: 'UPS2DA' } },
    },
  },
  {
    name: 'Wix: alpha-3 and full country names, ISO 3166-2 states of Australia and the US',
    fixture: 'wix-iso-codes-au-us.csv',
    platform: 'Wix',
    placed: ['20041', '20042'],
    sent: {
      '20041': { deliveryAddress: { countryCodeISO2: 'AU', state: 'NSW', postalCode: '2000' } },
      '20042': { deliveryAddress: { countryCodeISO2: 'US', state: 'TX', postalCode: '78701' } },
    },
  },
  {
    name: 'WebToffee: the method title out of the packed shipping cell, through the deliveryMethods table',
    fixture: 'webtoffee-packed-shipping.csv',
    platform: 'WooCommerce',
    placed: ['3201', '3202', '3204'],
    config: 'deliveryMethods:\n  Flat rate: UPS Ground\n  Local pickup: Customer Pickup\n',
    sent: {
      '3201': { deliveryAddress: { deliveryMethod: 'UPSGND' } },
      '3202': { deliveryAddress: { deliveryMethod: 'PICKUP' } },
      '3204': { deliveryAddress: { deliveryMethod: 'UPS2DA' } },
    },
  },
  {
    name: 'WebToffee: no shipping_method column, the title from shipping_items (the first of several lines)',
    fixture: 'webtoffee-shipping-items-only.csv',
    platform: 'WooCommerce',
    placed: ['3301', '3302'],
    config: 'deliveryMethods:\n  Flat rate: UPS Ground\n  Local pickup: Customer Pickup\n',
    sent: {
      '3301': { deliveryAddress: { deliveryMethod: 'UPSGND' } },
      '3302': { deliveryAddress: { deliveryMethod: 'PICKUP' } },
    },
  },
  {
    name: 'Advanced Order Export For WooCommerce (AlgolPlus), re-saved by Excel: ";", BOM, ZIP 02134 as 2134, "On hold"',
    fixture: 'algolplus-excel-de.csv',
    platform: 'WooCommerce',
    placed: ['4201', '4203'],
    sent: {
      '4201': {
        description: 'WooCommerce order 4201',
        deliveryAddress: {
          contactName: 'Dana Cho',
          streetAddress: '410 Ridge Rd, Suite 2',
          phone: '303-555-0142',
          postalCode: '02134',
          deliveryMethod: 'UPSGND',
        },
      },
      '4203': { deliveryAddress: { contactName: 'Ana Ruiz', state: 'TX', deliveryMethod: 'UPS2DA' } },
    },
  },
  {
    name: "Odoo 17 labels: the apostrophe of Odoo's formula guard taken off",
    fixture: 'odoo17-guarded.csv',
    platform: 'Odoo',
    placed: ['S00061', 'S00062'],
    sent: {
      S00061: { description: 'Odoo S00061 / =PO-12', deliveryAddress: { phone: '+1 210-555-0142' } },
      S00062: { deliveryAddress: { phone: '+44 20 7946 0958', streetAddress: '-' } },
    },
  },
  {
    name: "Odoo's import-compatible export: technical names, blank continuation cells, guarded cells",
    fixture: 'odoo-import-compatible.csv',
    platform: 'Odoo',
    placed: ['S00051', 'S00053'],
    sent: {
      S00051: {
        description: 'Odoo S00051 / PO-881',
        deliveryAddress: {
          contactName: 'Ana Ruiz',
          organisation: 'Comets FC',
          phone: '+1 713-555-0142',
          state: 'TX',
          postalCode: '77058',
          deliveryMethod: 'UPSGND',
        },
      },
      S00053: {
        description: 'Odoo S00053 / -rush-',
        deliveryAddress: { contactName: 'Kim Lowe', streetAddress: '-7 Pier Rd', deliveryMethod: 'UPS2DA' },
      },
    },
  },
  {
    name: "Odoo's import-compatible export with the fewest columns: no status, no carrier (the default method)",
    fixture: 'odoo-import-compatible-minimal.csv',
    platform: 'Odoo',
    placed: ['S00071', 'S00072'],
    env: { HTORDER_DEFAULT_DELIVERY_METHOD: 'UPS Ground' },
    sent: {
      S00071: { deliveryAddress: { contactName: 'Joe Park', organisation: 'Rams FC', streetAddress: '-12 Ram Rd' } },
      S00072: { deliveryAddress: { contactName: 'Owen Hart', state: 'MA', postalCode: '02134' } },
    },
  },
];

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

const withStatus = (jobs: Array<{ orderNumber: string | null; status: string }>, status: string) =>
  jobs.filter((j) => j.status === status).map((j) => j.orderNumber);

describe.each(CASES)('$name', ({ fixture, platform, placed, config, env: extra, sent }) => {
  it('recognised with no flag; plans exactly its orders, runs once, a second run sends nothing', async () => {
    const file = join(h.workDir, fixture);
    await copyFile(join(ROOT, 'test/presets/fixtures', fixture), file);
    const env: Record<string, string> = {
      ...extra,
      ...(config === undefined ? {} : { HTORDER_CONFIG: await h.write('htorder.yaml', config) }),
    };
    const plan = await h.cli('plan', [file], { env });
    expect(plan.code, plan.stderr + plan.stdout).toBe(0);
    expect(plan.stdout + plan.stderr).toContain(`read as a${platform === 'Odoo' ? 'n' : ''} ${platform} export`);
    expect(withStatus((await h.report(file)).jobs, 'valid')).toEqual(placed);
    expect(await h.sandbox.admin.jobs()).toEqual([]);

    const first = await h.cli('run', [file], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(withStatus((await h.report(file)).jobs, 'submitted')).toEqual(placed);
    const jobs = (await h.sandbox.admin.jobs()) as unknown as Sent[];
    expect(jobs.map((j) => j.orderNumber).sort()).toEqual([...placed].sort());
    for (const [order, expected] of Object.entries(sent)) {
      expect(jobs.find((j) => j.orderNumber === order)?.request, order).toMatchObject(expected);
    }

    const second = await h.cli('run', [file], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(await h.sandbox.admin.jobs()).toHaveLength(placed.length);
    const again = (await h.report(file)).jobs;
    expect(withStatus(again, 'submitted')).toEqual([]);
    expect(withStatus(again, 'already-submitted')).toEqual(placed);
  }, 60_000);
});

describe('what the variants make of the rows (no API)', () => {
  const jobsOf = async (fixture: string) => {
    const { loadManifest } = await import('../../src/manifest/load-manifest.js');
    const loaded = await loadManifest(join(ROOT, 'test/presets/fixtures', fixture));
    return loaded.manifest?.jobs ?? [];
  };

  it("Wix: the country as an ISO code before anything reads it (the ZIP's country, the report)", async () => {
    const jobs = await jobsOf('wix-iso-codes.csv');
    expect(jobs.map((j) => [j.orderNumber, j.deliveryAddress.country, j.deliveryAddress.state])).toEqual([
      ['20031', 'US', 'US-ME'],
      ['20032', 'CA', 'CA-ON'],
      ['20034', 'US', 'US-NY'],
    ]);
  });

  it('AlgolPlus with "Populate other columns" unticked: an order\'s later item rows take its cells, no line lost', async () => {
    const { loadManifest } = await import('../../src/manifest/load-manifest.js');
    const whole = (await loadManifest(join(ROOT, 'samples/woocommerce-algolplus/orders.csv'))).manifest?.jobs ?? [];
    const loaded = await loadManifest(join(ROOT, 'test/presets/fixtures/algolplus-order-cells-once.csv'));
    expect(loaded.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const jobs = loaded.manifest?.jobs ?? [];
    expect(jobs.map((j) => [j.orderNumber, j.items.length])).toEqual([
      ['4201', 2],
      ['4203', 1],
    ]);
    expect(jobs.map((j) => [j.deliveryAddress, j.items])).toEqual(whole.map((j) => [j.deliveryAddress, j.items]));
  });

  it("Odoo: the import-compatible export's continuation rows take the order's cells; guarded cells read plain", async () => {
    const jobs = await jobsOf('odoo-import-compatible.csv');
    expect(jobs[0]).toMatchObject({
      orderNumber: 'S00051',
      dateDue: '2026-12-04',
      deliveryAddress: { phone: '+1 713-555-0142', state: 'Texas', country: 'United States' },
      items: [
        { itemType: 'Asset', code: 'A10001', quantity: 24 },
        { itemType: 'Stock', code: 'GD5000', variantCode: 'GD5000-BLK', sizeQuantities: { L: 12 } },
      ],
    });
  });
});
