import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/core/config/config-file.js';
import { deliveryMethodTable } from '../../src/core/config/delivery-methods.js';
import { ROOT } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';

/**
 * A shop's shipping method becomes one of the account's delivery options: through the config
 * file's deliveryMethods table, else by the option's label or code; an order without one gets
 * the configured default; an unknown one is a located error listing the options.
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

/** The Shopify sample in the work folder, each order's method replaced by `methods` (order name → method). */
async function shopify(methods: Record<string, string>): Promise<string> {
  const file = join(h.workDir, 'orders_export.csv');
  await copyFile(join(ROOT, 'samples/shopify/orders_export.csv'), file);
  const lines = (await readFile(file, 'utf8')).split('\n').map((line) => {
    const cells = line.split(',');
    const method = methods[cells[0]];
    // Column 15 is Shipping Method; only an order's first row has it (fill-down does the rest).
    if (method !== undefined && cells[14] !== '') cells[14] = method;
    return cells.join(',');
  });
  await writeFile(file, lines.join('\n'));
  return file;
}

/** Each created job's order number → its delivery method code, as the API received it. */
async function sentMethods(): Promise<Record<string, string>> {
  const jobs = await h.sandbox.admin.jobs();
  return Object.fromEntries(
    jobs.map((j) => [
      j.orderNumber,
      (j.request as { deliveryAddress: { deliveryMethod: string } }).deliveryAddress.deliveryMethod,
    ]),
  );
}

describe('the shop method through the account options, the table and the default', () => {
  it('an account label in the export is its option; no configuration needed', async () => {
    const file = await shopify({});
    const r = await h.cli('run', [file]);
    expect(r.code, r.stderr).toBe(0);
    expect(await sentMethods()).toEqual({
      '#1041': 'UPSGND',
      '#1042': 'UPSGND',
      '#1044': 'UPS2DA',
    });
  }, 60_000);

  it('an unknown shop method is an error at its row and column, listing the options and the table', async () => {
    const file = await shopify({ '#1042': 'Express Shipping' });
    const r = await h.cli('plan', [file]);
    expect(r.code).toBe(1);
    const errors = await readFile(`${file}.errors.txt`, 'utf8');
    expect(errors).toMatch(
      /orders_export\.csv:5: Shipping Method: "Express Shipping" is not a delivery method of this account \(nearest: "FedEx Overnight"\); available: UPSGND \(UPS Ground\), UPS2DA \(UPS 2nd Day Air\), FDXON \(FedEx Overnight\), PICKUP \(Customer Pickup\); a shop's own method names go in the config file's deliveryMethods: \{ "Express Shipping": FedEx Overnight \}/,
    );
    expect(await h.sandbox.admin.jobs()).toEqual([]);
  }, 60_000);

  it('the config file maps shop methods; a profile entry wins over the file', async () => {
    const file = await shopify({ '#1041': 'Standard', '#1042': 'Express Shipping', '#1044': 'express shipping' });
    const config = await h.write(
      'htorder.config.yaml',
      'deliveryMethods:\n  Standard: UPS Ground\n  Express Shipping: FDXON\n',
    );
    const r = await h.cli('run', [file], { env: { HTORDER_CONFIG: config } });
    expect(r.code, r.stderr).toBe(0);
    // Case differs on #1044: the one entry that matches but for case.
    expect(await sentMethods()).toEqual({ '#1041': 'UPSGND', '#1042': 'FDXON', '#1044': 'FDXON' });

    const file2 = parseConfigFile(
      'deliveryMethods:\n  Express Shipping: FDXON\nprofiles:\n  shop2:\n    deliveryMethods: { Express Shipping: UPS 2nd Day Air }\n',
      '/c.yaml',
    );
    expect(deliveryMethodTable({ configFile: file2, profile: 'shop2' }).get('Express Shipping')).toEqual({
      target: 'UPS 2nd Day Air',
      at: '/c.yaml:5:24',
    });
    expect(deliveryMethodTable({ configFile: file2, profile: null }).get('Express Shipping')?.target).toBe('FDXON');
  }, 60_000);

  it('a table entry naming no option of the account is an error naming the entry', async () => {
    const file = await shopify({ '#1041': 'Standard' });
    const config = await h.write('htorder.config.yaml', 'deliveryMethods:\n  Standard: DHL Express\n');
    const r = await h.cli('plan', [file], { env: { HTORDER_CONFIG: config } });
    expect(r.code).toBe(1);
    expect(await readFile(`${file}.errors.txt`, 'utf8')).toContain(
      `"Standard" is mapped to "DHL Express" by deliveryMethods (${config}:2:3), which is not a delivery method of this account`,
    );
  }, 60_000);

  it('orders without a method get defaultDeliveryMethod instead of the preset default', async () => {
    const file = await shopify({ '#1041': '', '#1042': '', '#1044': '' });
    const r = await h.cli('run', [file], { env: { HTORDER_DEFAULT_DELIVERY_METHOD: 'FedEx Overnight' } });
    expect(r.code, r.stderr).toBe(0);
    expect(await sentMethods()).toEqual({ '#1041': 'FDXON', '#1042': 'FDXON', '#1044': 'FDXON' });
  }, 60_000);

  it('a table that is not a mapping of text is a configuration error at its line', () => {
    expect(() => parseConfigFile('deliveryMethods:\n  - Standard\n', '/c.yaml')).toThrow(
      'config file /c.yaml:2:3: deliveryMethods: must be a mapping of shop method → delivery option',
    );
    expect(() => parseConfigFile('deliveryMethods:\n  Standard: [a]\n', '/c.yaml')).toThrow(
      'config file /c.yaml:2:13: deliveryMethods: the delivery option of "Standard" must be text',
    );
  });
});
