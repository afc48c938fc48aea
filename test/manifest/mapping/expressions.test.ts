import { describe, expect, it } from 'vitest';
import { readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import {
  analyseExpression,
  bool,
  compileExpression,
  date,
  decimal,
  excelDate,
  ExpressionError,
} from '../../../src/manifest/mapping/expressions.js';
import { parseMapping } from '../../../src/manifest/mapping/load-mapping.js';
import { tempFiles } from '../../support/temp-files.js';

const files = tempFiles('htorder-expr-');
type Doc = { jobs: Array<Record<string, any>> };

async function read(csv: string, yaml: string, name = 'export.csv') {
  const file = await files.write(name, csv);
  const mapping = parseMapping(yaml, await files.write('m.yaml', yaml));
  const r = await readCsvDocument(file, { mapping });
  return { ...r, doc: r.doc as Doc | undefined };
}

describe('locale-aware helpers', () => {
  it('reads decimal commas and 24.0 quantities', () => {
    expect(decimal('24,00', ',')).toBe(24);
    expect(decimal('1.234,50', ',')).toBe(1234.5);
    expect(decimal('2,40 €', ',')).toBe(2.4);
    expect(decimal('24.0')).toBe(24);
    expect(() => decimal('twenty')).toThrow();
  });

  it('with no separator given, reads a number by its shape, and by the file where only the file can tell', () => {
    // Decimal commas, never a hundred times the amount.
    expect(decimal('12,50')).toBe(12.5);
    expect(decimal('24,00')).toBe(24);
    expect(decimal('1.234,50')).toBe(1234.5);
    expect(decimal('1,234.50')).toBe(1234.5);
    expect(decimal('1,234,567')).toBe(1234567);
    expect(decimal('1.234.567')).toBe(1234567);
    // One mark before exactly three digits: thousands, unless the file writes decimal commas.
    expect(decimal('1,000')).toBe(1000);
    expect(decimal('1,000', undefined, true)).toBe(1);
    expect(decimal('1.000')).toBe(1);
    expect(decimal('1.000', undefined, true)).toBe(1000);
    expect(decimal('24.0', undefined, true)).toBe(24);
    expect(decimal('12,50 €', undefined, true)).toBe(12.5);
    // Marks that group nothing by threes are no number.
    for (const bad of ['1.2.3', '1,2.50', '12,34,567', '1.2345,6'])
      expect(() => decimal(bad)).toThrow('is not a number');
  });

  it('with a separator given, the other mark must group thousands: never ten times the amount', () => {
    expect(decimal('1.234.567,5', ',')).toBe(1234567.5);
    expect(decimal('1,234,567.5', '.')).toBe(1234567.5);
    expect(decimal('-1.234', ',')).toBe(-1234);
    for (const bad of ['2.5', '24.0', '1.23,5'])
      expect(() => decimal(bad, ','), bad).toThrow('is not a number with "," as its decimal mark');
    expect(() => decimal('1,2,3', ',')).toThrow('is not a number');
    expect(() => decimal('2,5', '.')).toThrow('is not a number with "." as its decimal mark');
  });

  it("reads a workbook's number cell as the plain number it is, whatever separator the mapping declares", () => {
    expect(decimal('2.5', ',', false, true)).toBe(2.5);
    expect(decimal('1.234', ',', false, true)).toBe(1.234);
    expect(decimal('24', ',', false, true)).toBe(24);
    // A text cell of the workbook written the CSV's way still reads by the separator.
    expect(decimal('2,40', ',', false, true)).toBe(2.4);
    expect(decimal('1.234,50', ',', false, true)).toBe(1234.5);
  });

  it('reads yes and no as spreadsheets write them in their languages', () => {
    for (const yes of ['true', 'TRUE', 'WAHR', 'Vrai', 'VERDADERO', 'Sí', 'VERO', 'yes', '1'])
      expect(bool(yes)).toBe(true);
    for (const no of ['false', 'FALSCH', 'FAUX', 'FALSO', 'No', '0']) expect(bool(no)).toBe(false);
    expect(bool('')).toBeUndefined();
    expect(() => bool('maybe')).toThrow('"maybe" is not yes or no');
  });

  it('reads declared date formats, never guessing', () => {
    expect(date('04.12.2026', 'dd.mm.yyyy')).toBe('2026-12-04');
    expect(date('12/04/2026', 'mm/dd/yyyy')).toBe('2026-12-04');
    expect(date('2026-12-04 23:30:00', 'iso')).toBe('2026-12-04');
    expect(date('2026-12-04T23:30:00-06:00', 'iso')).toBe('2026-12-05');
    expect(() => date('13/04/2026', 'mm/dd/yyyy')).toThrow();
    expect(() => date('04.12.2026', 'mm/dd/yyyy')).toThrow();
    expect(excelDate(46363)).toBe('2026-12-07');
  });

  it("reads a workbook's date cell (an ISO date) in any declared format: one mapping for the CSV and the .xlsx", () => {
    expect(date('2026-12-04', 'dd.mm.yyyy')).toBe('2026-12-04');
    expect(date('2026-12-04T09:30:00', 'dd.mm.yyyy')).toBe('2026-12-04');
    expect(date('2026-12-04', 'mm/dd/yyyy')).toBe('2026-12-04');
    expect(date('2026-12-04T00:00:00', 'yyyy-mm-dd')).toBe('2026-12-04');
    // The one format that reads the same text otherwise reads it as declared.
    expect(date('2026-04-12', 'yyyy-dd-mm')).toBe('2026-12-04');
    expect(() => date('2026-13-04', 'dd.mm.yyyy')).toThrow('"2026-13-04" is not a date');
    expect(() => date('26-12-04', 'dd.mm.yyyy')).toThrow();
  });
});

describe('expression analyses, parsed once per source', () => {
  it('a remembered analysis is what a fresh parse gives, and an expression compiled from it evaluates', async () => {
    const sources = [
      '`Lineitem sku`',
      '$integer(Qty, ",")',
      '$contains(SKU, /^A\\d/) ? "Asset" : "Stock"',
      '$line.sku',
    ];
    for (const source of sources) {
      const first = analyseExpression(source);
      expect(analyseExpression(source)).toEqual(first);
      expect(compileExpression(source, {}).columns).toEqual(first.columns);
    }
    expect(analyseExpression('`Lineitem sku`').rename).toBe('Lineitem sku');
    const expr = compileExpression('$contains(SKU, /^A\\d/) ? "Asset" : "Stock"', {});
    expr.bind(new Map([['SKU', 0]]));
    expect(await expr.evaluate(['A10001-M'], () => ({ SKU: 'A10001-M' }))).toBe('Asset');
  });

  it("a condition's value is its branches': messages name the column a branch reads, not the one tested", () => {
    const zip = '`Shipping Country` = "US" ? $pad(`Shipping Zip`, 5) : `Shipping Zip`';
    expect(analyseExpression(zip).columns).toEqual(['Shipping Country', 'Shipping Zip']);
    expect(compileExpression(zip, {}).label).toBe('Shipping Zip');
    expect(analyseExpression('$contains(SKU, /^A\\d/) ? "Asset" : "Stock"').label).toBeUndefined();
    expect(analyseExpression('$trim(Phone) ? Phone : Mobile').label).toBe('Phone');
  });

  it('a bad expression is refused every time with the same message and position', () => {
    for (const source of ['$substringBefore(', '$eval("1")']) {
      const errors = [0, 1].map(() => {
        try {
          analyseExpression(source);
        } catch (err) {
          return err;
        }
        return undefined;
      });
      expect(errors[0]).toBeInstanceOf(ExpressionError);
      expect(errors[1]).toEqual(errors[0]);
      expect(() => compileExpression(source, {})).toThrow((errors[0] as Error).message);
    }
  });
});

describe('a file saved by a spreadsheet in a decimal-comma locale', () => {
  it('a `;`-separated export reads its quantities and flags as the spreadsheet wrote them', async () => {
    const csv = ['Ref;Qty;Rush', 'S1;1,000;WAHR', 'S2;24,00;FALSCH'].join('\n');
    const yaml = [
      'fields:',
      '  orderNumber: Ref',
      '  quantity: $integer(Qty)',
      '  orderComment: \'$bool(Rush) ? "rush" : "normal"\'',
      'constants: { deliveryMethod: UPS Ground, itemType: Asset, code: A10001 }',
    ].join('\n');
    const r = await read(csv, yaml);
    expect(r.diagnostics).toEqual([]);
    expect(r.doc?.jobs.map((j) => [j.orderNumber, j.items[0].quantity, j.orderComment])).toEqual([
      ['S1', 1, 'rush'],
      ['S2', 24, 'normal'],
    ]);
  });
});

describe('expression mappings', () => {
  const ORDERS = [
    'Ref,Status,Name,SKU,Qty',
    'S1,Sales Order,Ann Lee,A10001-M,"6,00"',
    ',,,A10001-L,"6,00"',
    ',,,FEE,1',
    'S2,Cancelled,Bo Ray,A10001-S,12',
    'S3,Sales Order,Cy Dee,GD5000-BLK-M,3',
    ',,,GD5000-BLK-M,2',
  ].join('\n');
  const MAPPING = [
    'fillDown: { key: Ref, columns: [Ref, Status, Name] }',
    'skip:',
    '  - { when: "Status = \'Cancelled\'", scope: order, reason: cancelled }',
    '  - { when: "SKU = \'FEE\'", reason: a fee }',
    'fields:',
    '  orderNumber: \'"ERP-" & Ref\'',
    '  contactName: $uppercase(Name)',
    '  itemType: \'$contains(SKU, /^A/) ? "Asset" : "Stock"\'',
    '  code: \'$substringBefore(SKU, "-")\'',
    '  variantCode: \'$contains(SKU, /^A/) ? "" : $replace(SKU, /-M$/, "")\'',
    '  quantity: \'$integer(Qty, ",")\'',
    '  size: $sizeOf(SKU)',
    'constants: { deliveryMethod: UPS Ground, country: US }',
    '',
  ].join('\n');

  it('fills down, skips orders and rows with reasons, computes fields, merges lines', async () => {
    const r = await read(ORDERS, MAPPING);
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(r.doc?.jobs.map((j) => j.orderNumber)).toEqual(['ERP-S1', 'ERP-S3']);
    expect(r.doc?.jobs[0].deliveryAddress.contactName).toBe('ANN LEE');
    expect(r.doc?.jobs[0].items).toEqual([
      { itemType: 'Asset', code: 'A10001', quantity: 12, comment: 'sizes: M 6, L 6' },
    ]);
    expect(r.doc?.jobs[1].items).toEqual([
      { itemType: 'Stock', code: 'GD5000', variantCode: 'GD5000-BLK', sizeQuantities: { M: 5 } },
    ]);
    expect(r.skipped).toEqual([
      { reason: 'a fee', scope: 'row', orderNumber: 'ERP-S1', rows: [4] },
      { reason: 'cancelled', scope: 'order', orderNumber: 'ERP-S2', rows: [5] },
    ]);
    expect(r.csv?.itemRows).toEqual([[2], [6]]);
  });

  it('names the export row and column of a value an expression cannot read', async () => {
    const r = await read(ORDERS.replace('"6,00"', 'six'), MAPPING);
    const bad = r.diagnostics.find((d) => d.code === 'mapping.expression');
    expect(bad).toMatchObject({ field: 'jobs[0].items[0]', source: { row: 2, columnName: 'Qty' } });
    expect(bad?.message).toContain('"six" is not a number');
  });

  it('without ignoreUnmapped, an unused column is an error; with it, read past', async () => {
    const csv = ORDERS.replace('Ref,Status,Name,SKU,Qty', 'Ref,Status,Name,SKU,Qty').replace(/\n/g, ',x\n') + ',x';
    const withExtra = csv.replace('Ref,Status,Name,SKU,Qty,x', 'Ref,Status,Name,SKU,Qty,Extra');
    const strict = await read(withExtra, MAPPING);
    expect(strict.diagnostics.map((d) => d.code)).toContain('csv.unmapped-column');
    const lax = await read(withExtra, `ignoreUnmapped: true\n${MAPPING}`);
    expect(lax.diagnostics.map((d) => d.code)).not.toContain('csv.unmapped-column');
  });

  it('refuses a lookup file outside the mapping folder, at the mapping line', () => {
    const yaml = 'lookups:\n  skus: { file: ../../etc/passwd }\nfields: { orderNumber: Ref }\n';
    expect(() => parseMapping(yaml, '/tmp/m.yaml')).toThrow(
      /m\.yaml:2:\d+: lookups\.skus\.file: .* outside the mapping's folder/,
    );
  });
});
