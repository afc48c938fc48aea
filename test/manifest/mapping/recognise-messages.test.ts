import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import { loadMapping } from '../../../src/manifest/mapping/load-mapping.js';
import { INPUT_MAPPING_CHOICE } from '../../../src/manifest/read-input.js';
import { ROOT } from '../../support/dist.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * Messages that say what to do: a header that nearly fits a preset names it and what it lacks; a
 * file that is not an order export says what it is; no internal preset path, no header repeated
 * per line; Odoo's export option named where it helps; a missing method names the setting.
 */
let dir: string;
beforeEach(async () => {
  dir = await tempDirPerTest('htorder-messages-');
});

const SHOPIFY = join(ROOT, 'samples/shopify/orders_export.csv');
/** The columns docs/presets/shopify.md calls required. */
const SHOPIFY_REQUIRED = [
  'Name',
  'Email',
  'Lineitem quantity',
  'Lineitem name',
  'Lineitem sku',
  'Shipping Name',
  'Shipping Address1',
  'Shipping City',
  'Shipping Zip',
  'Shipping Country',
];

/** `sample`'s columns `keep` (in that order), as a CSV file in the test's folder. */
async function columns(sample: string, keep: readonly string[], name = 'export.csv'): Promise<string> {
  const rows = parseCsv(await readFile(sample, 'utf8')) as string[][];
  const at = keep.map((c) => rows[0].indexOf(c));
  const file = join(dir, name);
  await writeFile(file, stringify(rows.map((r) => at.map((i) => (i < 0 ? '' : r[i])))));
  return file;
}

async function write(name: string, lines: string[]): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

const messages = (r: { diagnostics: Array<{ message: string }> }) => r.diagnostics.map((d) => d.message);

describe('a header that fits a preset, or nearly', () => {
  it("a Shopify export trimmed to the docs' required columns is read through the shopify preset", async () => {
    const r = await loadManifest(await columns(SHOPIFY, SHOPIFY_REQUIRED));
    expect(r.recognised?.preset).toBe('shopify');
    expect(r.manifest?.jobs.map((j) => j.orderNumber)).toEqual(['#1041', '#1042', '#1043', '#1044']);
    // No shipping-method column: the setting that gives one is named, not defaults.deliveryAddress.
    expect(new Set(messages(r))).toEqual(
      new Set([
        'no delivery method: the export has no shipping-method column (the shopify preset reads none); set ' +
          'defaultDeliveryMethod in the config file (or HTORDER_DEFAULT_DELIVERY_METHOD) to the option such orders ' +
          'ship by (docs/configuration.md#delivery-methods)',
      ]),
    );
  });

  it('one that lacks a column the preset needs is one line naming the preset and the column', async () => {
    const r = await loadManifest(
      await columns(
        SHOPIFY,
        SHOPIFY_REQUIRED.filter((c) => c !== 'Lineitem sku'),
      ),
    );
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0].code).toBe(INPUT_MAPPING_CHOICE);
    expect(r.diagnostics[0].message).toMatch(
      /^this looks like a Shopify export, but its header lacks "Lineitem sku", which the shopify preset reads; .*--mapping shopify/,
    );
  });

  it('the same export through --mapping shopify: one line, no path of a preset file', async () => {
    const file = await columns(
      SHOPIFY,
      SHOPIFY_REQUIRED.filter((c) => c !== 'Lineitem sku' && c !== 'Shipping Zip'),
    );
    const r = await loadManifest(file, { mapping: await loadMapping('shopify') });
    expect(messages(r)).toEqual([
      'the header lacks "Shipping Zip", "Lineitem sku", which the shopify preset reads; export with those columns ' +
        '(docs/presets/shopify.md), or read them otherwise in a mapping that extends shopify (docs/mappings.md)',
    ]);
    expect(r.diagnostics[0].code).toBe(INPUT_MAPPING_CHOICE);
  });

  it('a column the header has in another case is named as the one it has, recognised or given', async () => {
    const file = await columns(SHOPIFY, SHOPIFY_REQUIRED);
    await writeFile(file, (await readFile(file, 'utf8')).replace('Lineitem sku', 'Lineitem SKU'));
    const hint = '"Lineitem sku" (it has "Lineitem SKU": column names must match exactly, case included), which';
    expect(messages(await loadManifest(file))).toEqual([expect.stringContaining(`its header lacks ${hint}`)]);
    const given = await loadManifest(file, { mapping: await loadMapping('shopify') });
    expect(messages(given)).toEqual([expect.stringContaining(`the header lacks ${hint}`)]);
  });

  it("a mapping of the user's that extends a preset: its own lines located, the preset's at the header, once each", async () => {
    const file = await columns(
      SHOPIFY,
      SHOPIFY_REQUIRED.filter((c) => c !== 'Shipping Zip'),
    );
    const mapping = join(dir, 'shop.yaml');
    await writeFile(mapping, 'extends: shopify\nfields:\n  orderComment: "`Order Notes`"\n');
    const r = await loadManifest(file, { mapping: await loadMapping(mapping) });
    const unknown = r.diagnostics.filter((d) => d.code === 'mapping.unknown-column');
    expect(unknown.map((d) => [d.source?.file, d.message])).toEqual([
      [
        file,
        'the shopify preset reads column "Shipping Zip", which is not in the header; did you mean "Shipping City"?',
      ],
      [mapping, expect.stringMatching(/^fields\.orderComment names column "Order Notes", which is not in the header/)],
    ]);
    expect(JSON.stringify(r.diagnostics)).not.toContain('presets/shopify.yaml');
  });

  it('a line of another delimiter read as one cell is not suggested for every column', async () => {
    // `,`, `;` and tabs are told from the bytes; a `|` is not a separator shops write.
    const file = await write('pipes.csv', [
      SHOPIFY_REQUIRED.join('|'),
      '#1|a@b.c|1|Tee|A10001-M|Ann|1 St|Town|02134|US',
    ]);
    const r = await loadManifest(file, { mapping: await loadMapping('shopify') });
    expect(messages(r)).toEqual([
      'the header reads as one column: the file looks separated by "|", not commas; give the delimiter in a ' +
        'mapping that extends shopify (docs/mappings.md)',
    ]);
    const mapping = join(dir, 'mine.yaml');
    await writeFile(mapping, 'ignoreUnmapped: true\nfields:\n  orderNumber: Name\n  code: "`Lineitem sku`"\n');
    const mine = await loadManifest(file, { mapping: await loadMapping(mapping) });
    const unknown = mine.diagnostics.filter((d) => d.code === 'mapping.unknown-column');
    expect(unknown).toHaveLength(2);
    for (const d of unknown) expect(d.message).not.toContain('Shipping Address1');
    // No row is read through a mapping that does not fit: no job, none "skipped".
    expect(mine.diagnostics.map((d) => d.message)).toContainEqual(
      expect.stringMatching(/^none of the file's 1 rows was read/),
    );
    expect(mine.manifest?.jobs ?? []).toEqual([]);
  });

  it("a value a preset's expression cannot read names the preset, not its file", async () => {
    const file = join(dir, 'orders.csv');
    await writeFile(file, (await readFile(SHOPIFY, 'utf8')).replace(',20,Team Tee', ',twenty,Team Tee'));
    const r = await loadManifest(file);
    const bad = r.diagnostics.find((d) => d.message.includes('twenty'));
    expect(bad?.message).toMatch(/ \(the shopify preset\)$/);
  });
});

describe('a file that is not an order export says what it is', () => {
  it.each([
    [
      'Shopify products',
      [
        'Handle,Title,Body (HTML),Vendor,Product Category,Type,Tags,Published,Option1 Name,Option1 Value,Variant SKU,Variant Price',
        'team-tee,Team Tee,<p>Soft</p>,Acme,,Shirt,,TRUE,Size,M,TEE-M,10.00',
      ],
      /^this looks like a Shopify products export, not an order export: export its orders instead \(Shopify admin → Orders → Export\)/,
    ],
    [
      'WooCommerce products',
      [
        'ID,Type,SKU,Name,Published,Is featured?,Visibility in catalog,Short description,Regular price',
        '12,simple,TEE-M,Team Tee,1,0,visible,Soft,10',
      ],
      /^this looks like a WooCommerce products export, not an order export/,
    ],
    [
      "Etsy's Sold Orders",
      [
        'Sale Date,Order ID,Buyer User ID,Full Name,First Name,Last Name,Number of Items,Payment Method,Date Shipped,Street 1,Street 2,Ship City,Ship State,Ship Zipcode,Ship Country,Currency,Order Value',
        '11/21/26,3412876590,9911,Jo Alvarez,Jo,Alvarez,2,Credit Card,,55 Cedar Rd,,Portland,OR,97205,United States,USD,48.00',
      ],
      /^this looks like an Etsy "Sold Orders" CSV \(one row per order, without its items\): download the "Order Items" CSV instead/,
    ],
    [
      'a header with nothing of an order',
      ['Colour,Weight,Supplier', 'red,1,Acme'],
      /^the header has none of the order template's columns .* fits no shop export htorder reads \(.*BigCommerce, .*\): if it is an order export, describe it in a mapping/,
    ],
  ])('%s: one line, no reports', async (_, lines, expected) => {
    const r = await loadManifest(await write('export.csv', lines));
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ code: INPUT_MAPPING_CHOICE, message: expect.stringMatching(expected) });
    expect(r.manifest).toBeUndefined();
  });

  it('a template header with a typo still gets its column errors (the template is what it is)', async () => {
    const r = await loadManifest(await write('orders.csv', ['ordernumber,code,quantity', 'PO-1,A10001,10']));
    expect(r.diagnostics.some((d) => d.code === INPUT_MAPPING_CHOICE)).toBe(false);
  });
});

describe("Odoo's export option, named where it helps", () => {
  it('an import-compatible export without the address fields: untick the option', async () => {
    const file = await write('sale.order.csv', [
      '"name","partner_id","state","carrier_id","partner_shipping_id","order_line/product_id","order_line/product_uom_qty"',
      '"S00051","Comets FC","Sales Order","UPS Ground","Comets FC, Ana Ruiz","[A10001] Comets Crest Transfer (M)","24.0"',
    ]);
    const r = await loadManifest(file);
    expect(messages(r)).toEqual([
      expect.stringMatching(
        /^this looks like an Odoo export, but its header lacks "partner_shipping_id\/street", .*; Odoo's import-compatible export leaves some of them out .*: untick "I want to update data \(import-compatible export\)" in Odoo's export dialog$/,
      ),
    ]);
  });

  it('a labelled export lacking a column gets no advice about the option', async () => {
    const rows = (await readFile(join(ROOT, 'samples/odoo/sale.order.csv'), 'utf8')).replace(
      '"Delivery Address/ZIP"',
      '"Delivery Address/Postcode"',
    );
    const file = join(dir, 'sale.order.csv');
    await writeFile(file, rows);
    const [message] = messages(await loadManifest(file));
    expect(message).toMatch(/^this looks like an Odoo export, but its header lacks "Delivery Address\/ZIP"/);
    expect(message).not.toContain('import-compatible');
  });

  it('labels in another language: tick the option for technical names, or export in English', async () => {
    const file = await write('sale.order.csv', [
      '"Référence de la commande","Client","Statut","Adresse de livraison","Adresse de livraison/Rue","Adresse de livraison/Ville","Lignes de commande/Produit","Lignes de commande/Quantité"',
      '"S00041","Tigers FC","Bon de commande","Tigers FC, Ann Lee","12 Stadium Way","San Antonio","[A10001] Tee (M)","24.0"',
    ]);
    expect(messages(await loadManifest(file))).toEqual([
      expect.stringMatching(
        /^this looks like an Odoo export whose labels are in another language: .*tick "I want to update data \(import-compatible export\)"/,
      ),
    ]);
  });
});

describe('a missing delivery method names the setting', () => {
  it('Etsy (no method column), and a Shopify order whose method cell is blank', async () => {
    const etsy = await loadManifest(join(ROOT, 'samples/etsy/EtsySoldOrderItems2026-11.csv'));
    expect(new Set(messages(etsy))).toEqual(
      new Set([
        expect.stringMatching(
          /^no delivery method: the export has no shipping-method column \(the etsy preset reads none\); set defaultDeliveryMethod in the config file/,
        ),
      ]),
    );
    const file = join(dir, 'orders_export.csv');
    await writeFile(file, (await readFile(SHOPIFY, 'utf8')).replace(/,UPS 2nd Day Air,/, ',,'));
    expect(messages(await loadManifest(file))).toEqual([
      expect.stringMatching(/^no delivery method: the order's "Shipping Method" is blank; set defaultDeliveryMethod/),
    ]);
    // A YAML manifest keeps its own words: defaults.deliveryAddress is where its method goes.
    const yaml = await write('m.yaml', [
      'version: 1',
      'jobs:',
      '  - orderNumber: A',
      '    items: [{ itemType: Asset, code: A1, quantity: 1 }]',
    ]);
    expect(messages(await loadManifest(yaml)).join('\n')).toContain('defaults.deliveryAddress');
  });
});
