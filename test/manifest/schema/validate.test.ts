import { describe, expect, it } from 'vitest';
import { validateDocument } from '../../../src/manifest/schema/validate.js';
import { readYamlDocument } from '../../../src/manifest/yaml/read-yaml.js';

async function check(yaml: string) {
  const raw = await readYamlDocument('m.yaml', new TextEncoder().encode(yaml));
  expect(raw.diagnostics).toEqual([]);
  return validateDocument(raw);
}

/** One job with the given extra job lines and item lines (YAML block style, 4/8 indents). */
function job(
  jobLines: string[],
  itemLines: string[] = ['      - { itemType: Asset, code: A10001, quantity: 5 }'],
): string {
  return [
    'version: 1',
    'jobs:',
    '  - orderNumber: PO-1',
    ...jobLines.map((l) => `    ${l}`),
    '    items:',
    ...itemLines,
    '',
  ].join('\n');
}

describe('validateDocument', () => {
  it('accepts a conforming document', async () => {
    expect(await check(job(['deliveryAddress: { deliveryMethod: UPSGND }']))).toEqual([]);
  });

  it('explains a non-integer quantity at the value', async () => {
    const ds = await check(job([], ['      - itemType: Asset', '        code: A10001', '        quantity: abc']));
    expect(ds).toEqual([
      {
        severity: 'error',
        code: 'schema.type',
        message: 'must be an integer ≥ 1, got "abc"',
        field: 'jobs[0].items[0].quantity',
        source: { file: 'm.yaml', line: 7, column: 19 },
      },
    ]);
  });

  it.each([
    ['0', 'must be an integer ≥ 1, got 0'],
    ['2.5', 'must be an integer ≥ 1, got 2.5'],
    ['-3', 'must be an integer ≥ 1, got -3'],
    ['"7"', 'must be an integer ≥ 1, got "7"'],
  ])('quantity %s → %s (once)', async (value, message) => {
    const ds = await check(job([], [`      - { itemType: Asset, code: A10001, quantity: ${value} }`]));
    expect(ds.map((d) => d.message)).toEqual([message]);
  });

  it.each([
    [
      'deliveryAddress: { deliveryMethod: X, countryCodeIso2: US }',
      'jobs[0].deliveryAddress.countryCodeIso2',
      'unknown field "countryCodeIso2"; did you mean "countryCodeISO2"?',
      4,
      43,
    ],
    [
      'deliveryAddress: { deliveryMethod: X, Organisation: Acme }',
      'jobs[0].deliveryAddress.Organisation',
      'unknown field "Organisation"; did you mean "organisation"?',
      4,
      43,
    ],
    ['city: Austin', 'jobs[0].city', 'unknown field "city"; did you mean "deliveryAddress.city"?', 4, 5],
    ['Description: x', 'jobs[0].Description', 'unknown field "Description"; did you mean "description"?', 4, 5],
  ])('unknown key %s → suggestion at the key', async (line, field, message, l, c) => {
    const ds = await check(job([line]));
    expect(ds).toMatchObject([{ code: 'schema.unknown-field', field, message, source: { line: l, column: c } }]);
  });

  it('suggests customerReference for CustomerReference and does not also say it is missing', async () => {
    const ds = await check(
      job(
        [],
        ['      - { itemType: PriceCode, code: \'DTF Full Color 10" x 10"\', quantity: 10, CustomerReference: front }'],
      ),
    );
    expect(ds.map((d) => [d.field, d.message])).toEqual([
      ['jobs[0].items[0].CustomerReference', 'unknown field "CustomerReference"; did you mean "customerReference"?'],
    ]);
  });

  it('lists the known fields when nothing is close', async () => {
    const ds = await check(job(['wibble: 1']));
    expect(ds[0].message).toMatch(
      /^unknown field "wibble" \(the API would silently ignore it\); known fields here: orderNumber, description/,
    );
  });

  it('names the item type for per-type required fields', async () => {
    const ds = await check(job([], ['      - { itemType: PriceCode, code: X }']));
    expect(ds.map((d) => [d.field, d.message, d.source?.line])).toEqual([
      ['jobs[0].items[0].quantity', 'missing required field "quantity" (required for PriceCode items)', 5],
      [
        'jobs[0].items[0].customerReference',
        'missing required field "customerReference" (required for PriceCode items)',
        5,
      ],
    ]);
  });

  it('says a Stock item needs sizeQuantities or quantity, once', async () => {
    const ds = await check(job([], ['      - { itemType: Stock, code: GD5000, variantCode: GD5000-BLK }']));
    expect(ds.map((d) => d.message)).toEqual(['needs "sizeQuantities" or "quantity" (Stock items)']);
  });

  // The schema alone guards item fields: no local rule repeats these checks.
  it.each([
    ['{ itemType: constructor, code: X }', ['schema.enum']],
    ['{ itemType: toString, code: X }', ['schema.enum']],
    ['{ itemType: Asset, code: "" }', ['schema.empty', 'schema.required']],
    ['{ itemType: Stock, code: S, sizeQuantities: { M: -1, L: 2 } }', ['schema.type']],
    ['{ itemType: Asset, code: A1, quantity: 1.5 }', ['schema.type']],
  ])('refuses the item %s', async (item, codes) => {
    const ds = await check(job([], [`      - ${item}`]));
    expect(ds.map((d) => d.code).sort()).toEqual(codes);
  });

  it('refuses fields of another item type, naming where they belong', async () => {
    const ds = await check(
      job([], ['      - { itemType: Asset, code: A1, quantity: 5, externalArtworkUrl: "https://x/a.png" }']),
    );
    expect(ds).toMatchObject([
      {
        code: 'schema.not-allowed',
        field: 'jobs[0].items[0].externalArtworkUrl',
        message:
          '"externalArtworkUrl" is not used by Asset items (it applies to PriceCode items); the API would ignore it',
      },
    ]);
  });

  it('suggests the itemType spelling', async () => {
    const ds = await check(job([], ['      - { itemType: pricecode, code: X, quantity: 5 }']));
    expect(ds.map((d) => d.message)).toEqual([
      'must be one of PriceCode, Asset, Stock, got "pricecode"; did you mean "PriceCode"?',
    ]);
  });

  it('checks version, required top-level fields and empty lists', async () => {
    expect((await check('version: 2\njobs: []\n')).map((d) => [d.field, d.message])).toEqual([
      ['version', 'must be 1, got 2'],
      ['jobs', 'the manifest has no jobs'],
    ]);
    expect((await check('jobs:\n  - { orderNumber: A, items: [] }\n')).map((d) => [d.field, d.message])).toEqual([
      ['version', 'missing required field "version"'],
      ['jobs[0].items', 'a job needs at least one item'],
    ]);
  });

  it('refuses job-only fields and merge keys in defaults', async () => {
    const ds = await check(
      'version: 1\nbase: &b { city: Austin }\ndefaults:\n  orderNumber: X\n  deliveryAddress:\n    <<: *b\njobs:\n  - { orderNumber: A, items: [{ itemType: Asset, code: A1, quantity: 1 }] }\n',
    );
    expect(ds.map((d) => [d.field, d.message, d.source?.line])).toEqual([
      ['base', expect.stringMatching(/^unknown field "base"/), 2],
      ['defaults.orderNumber', '"orderNumber" cannot be a default; set it on each job', 4],
      [
        'defaults.deliveryAddress["<<"]',
        'YAML merge keys (<<) are not supported; put shared values under `defaults:`',
        6,
      ],
    ]);
  });

  it('reports wrong types with what was expected', async () => {
    const ds = await check(job(['mustDate: yes', 'deliveryAddress: [a]', 'customerUserId: 1.5']));
    expect(ds.map((d) => [d.field, d.message])).toEqual(
      expect.arrayContaining([
        ['jobs[0].mustDate', 'must be true or false, got "yes"'],
        ['jobs[0].deliveryAddress', 'must be a mapping (key: value), got a list'],
        ['jobs[0].customerUserId', 'must be an integer ≥ 1, got 1.5'],
      ]),
    );
    expect(ds).toHaveLength(3);
  });

  it('returns nothing for a document that could not be parsed', () => {
    expect(validateDocument({ doc: undefined, sources: { locate: (p) => ({ file: p }) } })).toEqual([]);
  });
});
