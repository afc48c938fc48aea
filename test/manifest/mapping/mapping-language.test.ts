import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/errors.js';
import { readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import { pairs } from '../../../src/manifest/mapping/expressions.js';
import { parseMapping } from '../../../src/manifest/mapping/load-mapping.js';
import { tempFiles } from '../../support/temp-files.js';

/** The mapping language's constructs for real exports: lines, optional columns, variants, overrides. */
const files = tempFiles('htorder-mapping-language-');
type Doc = { jobs: Array<Record<string, any>> };

async function read(csv: string, yaml: string) {
  const file = await files.write('export.csv', csv);
  const mapping = parseMapping(yaml, await files.write('m.yaml', yaml));
  const r = await readCsvDocument(file, { mapping });
  return { ...r, doc: r.doc as Doc | undefined, errors: r.diagnostics.filter((d) => d.severity === 'error') };
}

const errorOf = (yaml: string): string => {
  try {
    parseMapping(yaml, 'm.yaml');
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error('no error');
};

describe('lines: one row, several order lines', () => {
  const BASE = [
    'fields:',
    '  orderNumber: Ref',
    '  itemType: \'"Asset"\'',
    '  code: $line.sku',
    '  quantity: $integer($line.qty)',
    'constants: { deliveryMethod: UPS Ground, country: US, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701" }',
  ];

  it('splits a packed cell; a row that gives no line is reported as skipped', async () => {
    const csv = ['Ref,Items', 'P1,"sku:A1|qty:2;sku:A2|qty:3"', 'P2,'].join('\n');
    const r = await read(csv, [...BASE, 'lines: \'$split(Items, ";").$pairs($)\'', ''].join('\n'));
    expect(r.errors).toEqual([]);
    expect(r.doc?.jobs.map((j) => j.orderNumber)).toEqual(['P1']);
    expect(r.doc?.jobs[0].items).toEqual([
      { itemType: 'Asset', code: 'A1', quantity: 2 },
      { itemType: 'Asset', code: 'A2', quantity: 3 },
    ]);
    expect(r.skipped).toEqual([{ reason: "no order line in this row (the mapping's lines)", scope: 'row', rows: [3] }]);
  });

  it('reads numbered columns in the order of their numbers, blank ones left out', async () => {
    const csv = ['Ref,item_2,item_1,item_3', 'P1,sku:A2|qty:3,sku:A1|qty:2,'].join('\n');
    // The columns are read through the whole row (`$`): ignoreUnmapped says that is all right.
    const yaml = [...BASE, 'ignoreUnmapped: true', 'lines: \'$numbered($, "item_").$pairs($)\'', ''].join('\n');
    const r = await read(csv, yaml);
    expect(r.errors).toEqual([]);
    expect(r.doc?.jobs[0].items.map((i: { code: string }) => i.code)).toEqual(['A1', 'A2']);
  });

  it('a row that would give more than 1,000 lines is an error on the row, not a stall', async () => {
    const cell = Array.from({ length: 1_001 }, (_, i) => `sku:A${i}|qty:1`).join(';');
    const r = await read(
      `Ref,Items\nP1,"${cell}"\n`,
      [...BASE, 'lines: \'$split(Items, ";").$pairs($)\'', ''].join('\n'),
    );
    // The row is there: an error on it, not "a header but no rows".
    expect(r.errors.map((d) => [d.code, d.message, d.source])).toEqual([
      [
        'mapping.expression',
        'lines: the row gives 1001 lines, more than the 1000 one row may give',
        expect.objectContaining({ row: 2 }),
      ],
    ]);
  });

  it('$pairs splits a packed cell into names and values, the first separator only', () => {
    expect(pairs('name:Tee: Black|sku:GD5000|meta:pa_size=M')).toEqual({
      name: 'Tee: Black',
      sku: 'GD5000',
      meta: 'pa_size=M',
    });
    expect(pairs('a=1;b=2', ';', '=')).toEqual({ a: '1', b: '2' });
    expect(pairs('')).toBeUndefined();
  });
});

describe('columns a mapping may do without', () => {
  const MAPPING = [
    'optionalColumns: [Phone]',
    'fields:',
    '  orderNumber: Ref',
    '  phone: Phone',
    '  code: Sku',
    '  itemType: \'"Asset"\'',
    '  quantity: $integer(Qty)',
    '',
  ].join('\n');

  it('an optional column that is absent reads as blank; a required one is an error with a suggestion', async () => {
    const ok = await read('Ref,Sku,Qty\nP1,A1,2\n', MAPPING);
    expect(ok.diagnostics.filter((d) => d.code === 'mapping.unknown-column')).toEqual([]);
    expect(ok.doc?.jobs[0].deliveryAddress?.phone).toBeUndefined();
    const bad = await read('Ref,SKU_,Qty\nP1,A1,2\n', MAPPING);
    const missing = bad.diagnostics.filter((d) => d.code === 'mapping.unknown-column');
    expect(missing.map((d) => d.message)).toEqual([
      expect.stringMatching(/fields\.code names column "Sku", which is not in the header .*; did you mean "SKU_"\?$/),
    ]);
  });
});

describe('variants and what a mapping that extends one keeps', () => {
  const PRESET = [
    'fields:',
    '  orderNumber: Ref',
    '  code: Sku',
    '  itemType: \'"Asset"\'',
    '  quantity: $integer(Qty)',
    'variants:',
    '  - name: v2',
    '    when: [Article]',
    '    fields:',
    '      code: Article',
    '',
  ].join('\n');

  it('the header chooses the variant; the extending mapping still wins over it', async () => {
    await files.write('base.yaml', PRESET);
    const v1 = await read('Ref,Sku,Qty\nP1,A1,2\n', 'extends: base.yaml\n');
    expect(v1.doc?.jobs[0].items[0].code).toBe('A1');
    const v2 = await read('Ref,Article,Qty\nP1,A9,2\n', 'extends: base.yaml\n');
    expect(v2.errors).toEqual([]);
    expect(v2.doc?.jobs[0].items[0].code).toBe('A9');
    const own = await read(
      'Ref,Article,Qty\nP1,A9,2\n',
      'extends: base.yaml\nfields:\n  orderNumber: \'"X-" & Ref\'\n',
    );
    expect(own.doc?.jobs[0].orderNumber).toBe('X-P1');
  });

  it('skip: [] drops the inherited rules, fillDown columns: [] the inherited fill-down, field: null the field', () => {
    const shopify = parseMapping('extends: shopify\n', 'm.yaml');
    expect(shopify.skip?.length).toBeGreaterThan(0);
    const m = parseMapping('extends: shopify\nskip: []\nfillDown: { columns: [] }\nfields:\n  phone: null\n', 'm.yaml');
    expect(m.skip).toEqual([]);
    expect(m.fillDown).toEqual({ columns: [] });
    expect(m.fields?.phone).toBeUndefined();
    expect(m.fields?.contactName).toBe('`Shipping Name`');
    const more = parseMapping('extends: shopify\nskip:\n  - { when: \'Email = ""\', reason: no email }\n', 'm.yaml');
    expect(more.skip?.map((r) => r.reason).at(-1)).toBe('no email');
    expect(more.skip?.length).toBe((shopify.skip?.length ?? 0) + 1);
  });

  it('a field set to null leaves the column blank', async () => {
    const csv = 'Ref,Sku,Qty,Tel\nP1,A1,2,555-0100\n';
    await files.write('base.yaml', `${PRESET.split('variants:')[0]}  phone: Tel\n`);
    expect((await read(csv, 'extends: base.yaml\n')).doc?.jobs[0].deliveryAddress.phone).toBe('555-0100');
    const blank = await read(csv, 'extends: base.yaml\nfields:\n  phone: null\n');
    expect(blank.doc?.jobs[0].deliveryAddress?.phone).toBeUndefined();
  });
});

describe('fillDown', () => {
  // A summary row with the order's values, then its item rows with them left blank.
  const CSV = ['Ref,Name,Tel,Kits,Sku,Qty', 'P1,Ana Ruiz,555-0100,two,,', 'P1,,,,A1,2', 'P1,,,,A2,3', 'P2,Bo,,1,A1,1'];
  // The order's values on its first item row.
  const FIRST = ['Ref,Name,Tel,Kits,Sku,Qty', 'P1,Ana Ruiz,555-0100,two,A1,2', 'P1,,,,A2,3'];
  const YAML = [
    'fillDown: { key: Ref, columns: [Name, Tel, Kits] }',
    'skip: [{ when: \'Sku = ""\', reason: summary row }]',
    'fields:',
    '  orderNumber: Ref',
    '  contactName: Name',
    '  phone: Tel',
    '  description: \'"Kits: " & $string($integer(Kits))\'',
    '  itemType: \'"Asset"\'',
    '  code: Sku',
    '  quantity: $integer(Qty)',
    '',
  ].join('\n');

  it('what is found in a filled-down value names the row and column it is written on, once', async () => {
    const r = await read(`${CSV.join('\n')}\n`, YAML);
    expect(r.doc?.jobs[0].deliveryAddress).toMatchObject({ contactName: 'Ana Ruiz', phone: '555-0100' });
    expect(r.errors.map((d) => d.source)).toEqual([{ file: expect.any(String), row: 2, columnName: 'Kits' }]);
    expect(r.sources.locate('jobs[0].deliveryAddress.phone')).toMatchObject({ row: 2, columnName: 'Tel' });
    expect(r.sources.locate('jobs[1].deliveryAddress.contactName')).toMatchObject({ row: 5, columnName: 'Name' });
    const first = await read(`${FIRST.join('\n')}\n`, YAML);
    expect(first.errors.map((d) => d.source)).toEqual([{ file: expect.any(String), row: 2, columnName: 'Kits' }]);
  });
});

describe('values', () => {
  it('"*" is the value of every text the map does not list', async () => {
    const csv = 'Ref,Sku,Qty,Ship\nP1,A1,2,Express\nP2,A1,2,Standard\nP3,A1,2,Pickup Counter\n';
    const yaml = [
      'fields: { orderNumber: Ref, code: Sku, itemType: \'"Asset"\', quantity: $integer(Qty), deliveryMethod: Ship }',
      'values:',
      '  deliveryMethod: { Express: UPS 2nd Day Air, Pickup Counter: Pickup, "*": UPS Ground }',
      '',
    ].join('\n');
    const r = await read(csv, yaml);
    expect(r.doc?.jobs.map((j) => j.deliveryAddress.deliveryMethod)).toEqual([
      'UPS 2nd Day Air',
      'UPS Ground',
      'Pickup',
    ]);
  });
});

describe('messages about the mapping itself', () => {
  it('a column name with spaces without backticks says how to quote it', () => {
    expect(errorOf('fields:\n  deliveryMethod: Shipping Method\n')).toMatch(
      /m\.yaml:2:\d+: fields\.deliveryMethod: bad expression: .*; a column name with spaces goes in backticks: `Shipping Method`/,
    );
    expect(errorOf("fields:\n  phone: '$trim(Name) and Billing Phone'\n")).toMatch(/backticks: `Billing Phone`/);
  });

  it('one mistake is reported once', () => {
    const message = errorOf('fields:\n  delivery: Name\n');
    expect(message.match(/"delivery" is not a template field/g)).toHaveLength(1);
  });
});
