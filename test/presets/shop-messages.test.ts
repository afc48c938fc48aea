import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';

/** What plan says about a shop export's values the account does not know, in the shop's terms. */
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

async function sample(path: string, edit: (text: string) => string = (t) => t): Promise<string> {
  const file = join(h.workDir, path.split('/').pop() as string);
  await copyFile(join(ROOT, path), file);
  await writeFile(file, edit(await readFile(file, 'utf8')));
  return file;
}

describe("a shop's own SKU", () => {
  it("names the preset's SKU table, at the export's row and column", async () => {
    const file = await sample('samples/shopify/orders_export.csv', (t) => t.replace('GD5000-BLK-M', 'HAWKS-HOODIE-M'));
    const plan = await h.cli('plan', [file]);
    expect(plan.code).toBe(1);
    const errors = await readFile(`${file}.errors.txt`, 'utf8');
    expect(errors).toContain(
      'orders_export.csv:5: Lineitem sku: no stock item "HAWKS" for this account; the shopify preset takes the code ' +
        'from the start of the SKU in "Lineitem sku": if the shop\'s SKUs are its own, map each to the account\'s ' +
        'code in a SKU table (a mapping with `extends: shopify` and a skus lookup, docs/mappings.md#the-shops-own-skus)',
    );
    expect(await h.sandbox.admin.jobs()).toEqual([]);
  }, 60_000);

  it('the SKU table of docs/mappings.md, as written there, fixes it', async () => {
    const docs = await readFile(join(ROOT, 'docs/mappings.md'), 'utf8');
    const block = docs.slice(docs.indexOf('# shop.yaml, beside skus.csv'));
    const mapping = await h.write('shop.yaml', block.slice(0, block.indexOf('```')));
    await h.write('skus.csv', 'sku,itemType,code,variantCode,size\nHAWKS-HOODIE-M,Stock,GD5000,GD5000-BLK,M\n');
    const file = await sample('samples/shopify/orders_export.csv', (t) => t.replace('GD5000-BLK-M', 'HAWKS-HOODIE-M'));
    const plan = await h.cli('plan', [file], { mapping });
    expect(plan.code, plan.stderr + plan.stdout).toBe(0);
    const jobs = (await h.report(file)).jobs.filter((j) => j.status === 'valid');
    expect(jobs.map((j) => j.orderNumber)).toEqual(['#1041', '#1042', '#1044']);
  }, 60_000);

  it('a YAML manifest gets no SKU advice', async () => {
    const file = await h.write(
      'orders.yaml',
      'version: 1\njobs:\n  - orderNumber: PO-1\n    deliveryAddress: { deliveryMethod: PICKUP }\n    items: [{ itemType: Stock, code: HAWKS, sizeQuantities: { M: 1 } }]\n',
    );
    const plan = await h.cli('plan', [file]);
    expect(plan.code).toBe(1);
    const errors = await readFile(`${file}.errors.txt`, 'utf8');
    expect(errors).toContain('no stock item "HAWKS" for this account');
    expect(errors).not.toContain('SKU');
  }, 60_000);
});

describe('an Etsy export with no default delivery method', () => {
  it('names defaultDeliveryMethod; with the setting, the orders plan', async () => {
    const file = await sample('samples/etsy/EtsySoldOrderItems2026-11.csv');
    const plan = await h.cli('plan', [file]);
    expect(plan.code).toBe(1);
    const errors = await readFile(`${file}.errors.txt`, 'utf8');
    expect(errors).toMatch(
      /no delivery method: the export has no shipping-method column \(the etsy preset reads none\); set defaultDeliveryMethod/,
    );
    expect(errors).not.toContain('defaults.deliveryAddress');
    const again = await h.cli('plan', [file], { env: { HTORDER_DEFAULT_DELIVERY_METHOD: 'UPS Ground' } });
    expect(again.code, again.stderr).toBe(0);
  }, 60_000);
});
