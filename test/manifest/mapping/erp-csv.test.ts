import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import { csvRows } from '../csv/csv-rows.js';
import { parseMapping } from '../../../src/manifest/mapping/load-mapping.js';
import type { Mapping } from '../../../src/manifest/mapping/model.js';
import { tempFiles } from '../../support/temp-files.js';

const files = tempFiles();
type Doc = { jobs: Array<Record<string, any>> };

const MAPPING_YAML = `
delimiter: ";"
encoding: windows-1252
skipRows: 2
columns:
  PO_NUM: orderNumber
  SHIP_VIA: deliveryMethod
  NAME: contactName
  TYPE: itemType
  ITEM: code
  QTY: quantity
  VARIANT: variantCode
constants:
  country: US
  customerReference: nightly
values:
  deliveryMethod: { GRND: UPS Ground, "2DAY": UPS 2nd Day Air }
  itemType: { R: Asset, S: Stock, N: PriceCode }
sizeColumns: { QTY_S: S, QTY_M: M }
attributeColumns: { COLOURS: Colors }
ignoreColumns: [PRICE]
`;

const EXPORT = [
  'Nightly export – Müller GmbH;;;;;;;;;;',
  'generated 2026-05-01;;;;;;;;;;',
  'PO_NUM;SHIP_VIA;NAME;TYPE;ITEM;QTY;VARIANT;QTY_S;QTY_M;COLOURS;PRICE',
  'RO-1;GRND;Jürgen Müller;R;A10001;50;;;;;€ 2,40',
  'RO-1;;;S;GD5000;;GD5000-BLK;10;20;;€ 6,10',
  'RO-2;2DAY;Zoë – Œ;N;DTF Full Color 10" x 10";30;;;;4;€ 3,20',
  'RO-2;;;S;GD5000;;GD5000-WHT;x;5;;€ 6,10',
  'RO-1;FDXON;;R;A10001;;;;;;',
];

async function readErp(lines: string[], mapping: Mapping, name = 'export.csv') {
  const file = await files.write(name, iconv.encode(lines.join('\r\n') + '\r\n', 'windows-1252'));
  const r = await readCsvDocument(file, { mapping });
  return { ...r, doc: r.doc as Doc | undefined, file };
}
const mapping = (yaml = MAPPING_YAML): Mapping => parseMapping(yaml, 'erp.yaml');

describe('readCsvDocument with an ERP mapping', () => {
  it('decodes, skips banner rows, splits on the delimiter, maps columns, values, sizes, attributes and constants', async () => {
    const r = await readErp(EXPORT.slice(0, 7), mapping());
    expect(r.diagnostics).toEqual([]);
    expect(r.doc?.jobs).toEqual([
      {
        orderNumber: 'RO-1',
        deliveryAddress: { deliveryMethod: 'UPS Ground', contactName: 'Jürgen Müller', country: 'US' },
        items: [
          { itemType: 'Asset', code: 'A10001', quantity: 50, customerReference: 'nightly' },
          {
            itemType: 'Stock',
            code: 'GD5000',
            variantCode: 'GD5000-BLK',
            customerReference: 'nightly',
            sizeQuantities: { S: 10, M: 20 },
          },
        ],
      },
      {
        orderNumber: 'RO-2',
        deliveryAddress: { deliveryMethod: 'UPS 2nd Day Air', contactName: 'Zoë – Œ', country: 'US' },
        items: [
          {
            itemType: 'PriceCode',
            code: 'DTF Full Color 10" x 10"',
            quantity: 30,
            customerReference: 'nightly',
            attributes: { Colors: '4' },
          },
          {
            itemType: 'Stock',
            code: 'GD5000',
            variantCode: 'GD5000-WHT',
            customerReference: 'nightly',
            sizeQuantities: { S: 'x', M: 5 },
          },
        ],
      },
    ]);
    // Rows are physical lines of the export, banner lines counted: the header is line 3.
    expect(r.csv).toEqual({
      header: EXPORT[2].split(';'),
      skipRows: 2,
      itemRows: [
        [4, 5],
        [6, 7],
      ],
      read: { delimiter: ';', encoding: 'windows-1252' },
    });
  });

  it('points errors at the export row and the ERP column name; constants at the mapping', async () => {
    const r = await readErp(EXPORT.slice(0, 7), mapping());
    expect(r.sources.locate('jobs[1].items[1].sizeQuantities.S')).toEqual({
      file: r.file,
      row: 7,
      columnName: 'QTY_S',
    });
    expect(r.sources.locate('jobs[1].items[0].attributes.Colors')).toEqual({
      file: r.file,
      row: 6,
      columnName: 'COLOURS',
    });
    expect(r.sources.locate('jobs[0].deliveryAddress.deliveryMethod')).toEqual({
      file: r.file,
      row: 4,
      columnName: 'SHIP_VIA',
    });
    expect(r.sources.locate('jobs[0].items[1].itemType')).toEqual({ file: r.file, row: 5, columnName: 'TYPE' });
    expect(r.sources.locate('jobs[0].deliveryAddress.country')).toEqual({ file: 'erp.yaml', line: 14, column: 12 });
    expect(r.sources.locate('jobs[0].items[0].customerReference')).toEqual({ file: 'erp.yaml', line: 15, column: 22 });
  });

  it('reports a conflict in mapped values with the ERP column and both rows', async () => {
    const r = await readErp(EXPORT, mapping());
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({
      code: 'csv.conflict',
      field: 'jobs[0].deliveryAddress.deliveryMethod',
      source: { file: r.file, row: 8, columnName: 'SHIP_VIA' },
    });
    expect(r.diagnostics[0].message).toMatch(/^"FDXON" conflicts with "UPS Ground" on row 4 of order RO-1/);
  });

  it('lets a row override an item constant, and a job constant only fills jobs that lack the field', async () => {
    const m = mapping(MAPPING_YAML.replace('columns:\n', 'columns:\n  CTRY: country\n  REF: customerReference\n'));
    const r = await readErp(
      [
        '',
        '',
        'PO_NUM;SHIP_VIA;NAME;TYPE;ITEM;QTY;VARIANT;QTY_S;QTY_M;COLOURS;PRICE;CTRY;REF',
        'RO-1;GRND;A;R;A1;5;;;;;;;own',
        'RO-1;;;R;A2;5;;;;;;CA;',
        'RO-2;GRND;A;R;A3;5;;;;;;;',
      ],
      m,
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.doc?.jobs.map((j) => j.deliveryAddress.country)).toEqual(['CA', 'US']);
    expect(r.doc?.jobs[0].items.map((i: { customerReference: string }) => i.customerReference)).toEqual([
      'own',
      'nightly',
    ]);
    expect(r.sources.locate('jobs[0].deliveryAddress.country')).toEqual({ file: r.file, row: 5, columnName: 'CTRY' });
  });

  it('rejects unmapped columns, suggesting the mapping entry it probably meant', async () => {
    const lines = [...EXPORT.slice(0, 7)];
    lines[2] = lines[2].replace('QTY_M', 'QTY_MED').replace('NAME', 'SHIP_NAME');
    const r = await readErp(lines, mapping());
    expect(r.diagnostics.map((d) => [d.code, d.message])).toEqual([
      [
        'csv.unmapped-column',
        'column "SHIP_NAME" is not mapped (the mapping names "NAME", which is not in the header: a typo?); add it to columns, sizeColumns or attributeColumns in erp.yaml, or list it in ignoreColumns',
      ],
      [
        'csv.unmapped-column',
        'column "QTY_MED" is not mapped (the mapping names "QTY_M", which is not in the header: a typo?); add it to columns, sizeColumns or attributeColumns in erp.yaml, or list it in ignoreColumns',
      ],
      [
        'csv.mapping-column-missing',
        'the mapping (erp.yaml) names column "NAME", which is not in the header; did you mean "SHIP_NAME"?',
      ],
      [
        'csv.mapping-column-missing',
        'the mapping (erp.yaml) names column "QTY_M", which is not in the header; did you mean "QTY_MED"?',
      ],
    ]);
    expect(r.diagnostics[0].source).toEqual({ file: r.file, row: 3, columnName: 'SHIP_NAME' });
  });

  it('lets template-named columns through unmapped and reports two sources for one field', async () => {
    const r = await readCsvDocument(
      await files.write('plain.csv', 'orderNumber;code;ITEM;itemType\nPO-1;A1;A2;Asset\n'),
      {
        mapping: { delimiter: ';', columns: { ITEM: 'code' } },
      },
    );
    expect(r.diagnostics.map((d) => d.message)).toEqual([
      'columns "code" and "ITEM" both give code; keep one (or list one in ignoreColumns)',
    ]);
  });

  it('re-reads the export rows verbatim (decoded, untrimmed, unmapped) with the same row numbers', async () => {
    const file = await files.write('rows.csv', iconv.encode(EXPORT.slice(0, 7).join('\r\n') + '\r\n', 'windows-1252'));
    const { rows } = await csvRows(file, { mapping: mapping() });
    expect(rows).toEqual(EXPORT.slice(3, 7).map((l, i) => ({ row: 4 + i, cells: l.split(';') })));
  });
});
