import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { loadManifest } from '../../src/manifest/load-manifest.js';
import { parseMapping } from '../../src/manifest/mapping/load-mapping.js';
import type { Diagnostic } from '../../src/manifest/model.js';
import { ROOT } from '../support/dist.js';
import { lines } from '../support/temp-files.js';
import { loadText } from '../support/manifest-files.js';
import { tempDirPerTest } from '../support/temp-files.js';

/** code, severity, where (row/column or line) — what a user reads. */
const seen = (ds: Diagnostic[]) =>
  ds.map((d) => `${d.severity} ${d.code} ${d.source?.row ?? d.source?.line}:${d.source?.columnName ?? d.field}`);

const yaml = (orderNumber: string, address: string, extra = '') =>
  lines(
    'version: 1',
    'jobs:',
    `  - orderNumber: "${orderNumber}"`,
    extra,
    `    deliveryAddress: { deliveryMethod: UPSGND, contactName: Ann, streetAddress: 1 Main St, city: X, ${address} }`,
    '    items: [{ itemType: Asset, code: A10001, quantity: 25 }]',
  );

const CSV_HEADER =
  'orderNumber,dateDue,deliveryMethod,contactName,streetAddress,city,postalCode,country,itemType,code,quantity';

describe('Excel damage, in YAML', () => {
  it('a four-digit US ZIP is padded, with a warning at its line', async () => {
    const r = await loadText(yaml('PO-1', 'state: MA, postalCode: "2134", country: US'));
    expect(r.manifest?.jobs[0].deliveryAddress.postalCode).toBe('02134');
    expect(seen(r.diagnostics)).toEqual(['warning postal-code.leading-zero 5:jobs[0].deliveryAddress.postalCode']);
    expect(r.diagnostics[0].message).toBe(
      '"2134" has four digits; US ZIP codes have five, so a spreadsheet dropped its leading zero: sent as "02134" (format the column as Text in the export to keep it)',
    );
  });

  it('a ZIP+4 and a German PLZ too; four digits elsewhere (a Danish or Australian code) are left alone', async () => {
    const zip4 = await loadText(yaml('PO-1', 'state: MA, postalCode: "2134-1234", countryCodeISO2: US'));
    expect(zip4.manifest?.jobs[0].deliveryAddress.postalCode).toBe('02134-1234');
    const plz = await loadText(yaml('PO-1', 'postalCode: "1099", country: Deutschland'));
    expect(plz.manifest?.jobs[0].deliveryAddress.postalCode).toBe('01099');
    expect(plz.diagnostics[0].message).toContain('German postal codes (PLZ) have five');
    const au = await loadText(yaml('PO-1', 'postalCode: "2000", country: Australia'));
    expect(au.manifest?.jobs[0].deliveryAddress.postalCode).toBe('2000');
    expect(au.diagnostics).toEqual([]);
  });

  it('padding by country: the zeros its codes may start with, and no more', async () => {
    const padded = async (address: string) => {
      const r = await loadText(yaml('PO-1', address));
      return [r.manifest?.jobs[0].deliveryAddress.postalCode, r.diagnostics.map((d) => d.message)];
    };
    expect(await padded('postalCode: "118", country: Italia')).toEqual([
      '00118',
      [
        '"118" has three digits; Italian postal codes (CAP) have five, so a spreadsheet dropped its leading zeros: sent as "00118" (format the column as Text in the export to keep it)',
      ],
    ]);
    expect((await padded('postalCode: "1000", country: FR'))[0]).toBe('01000');
    expect((await padded('postalCode: "8001", country: España'))[0]).toBe('08001');
    expect((await padded('postalCode: "100", countryCodeISO2: FI'))[0]).toBe('00100');
    expect((await padded('postalCode: "800", country: Australia'))[0]).toBe('0800');
    expect((await padded('postalCode: "150", country: NO'))[0]).toBe('0150');
    expect((await padded('state: NY, postalCode: "501", country: USA'))[0]).toBe('00501');
    expect((await padded('postalCode: "601-1234", country: Puerto Rico'))[0]).toBe('00601-1234');
    // Fewer digits than a lost zero or two explain, or a country whose codes never start with one: left alone.
    expect(await padded('postalCode: "123", country: DE')).toEqual(['123', []]);
    expect(await padded('postalCode: "1000", country: Belgium')).toEqual(['1000', []]);
  });

  it('an order number in scientific notation is refused: its digits are lost', async () => {
    const r = await loadText(yaml('1.23E+11', 'postalCode: "02134", country: US'));
    expect(seen(r.diagnostics)).toEqual(['error order-number.scientific 3:jobs[0].orderNumber']);
    expect(r.diagnostics[0].message).toContain('its real digits are lost');
  });

  it('a date that is a serial day number is refused, and the message says how to declare serials', async () => {
    const r = await loadText(yaml('PO-1', 'postalCode: "02134", country: US', '    dateDue: "46363"'));
    expect(seen(r.diagnostics)).toEqual(['error date.excel-serial 4:jobs[0].dateDue']);
    expect(r.diagnostics[0].message).toContain('(it stands for 2026-12-07)');
    expect(r.diagnostics[0].message).toContain('$excelDate');
  });
});

describe('Excel damage, in CSV and mapped exports: named by row and column', () => {
  it('the default template', async () => {
    const r = await loadText(
      lines(
        CSV_HEADER,
        '1.23E+11,,UPSGND,Ann,1 Main St,Boston,2134,US,Asset,A10001,25',
        'PO-2,46363,UPSGND,Ann,1 Main St,Boston,2134,US,Asset,A10001,25',
      ),
      'orders.csv',
    );
    expect(seen(r.diagnostics)).toEqual([
      'warning postal-code.leading-zero 2:postalCode',
      'error order-number.scientific 2:orderNumber',
      'warning postal-code.leading-zero 3:postalCode',
      'error date.excel-serial 3:dateDue',
    ]);
    expect(r.manifest?.jobs.map((j) => j.deliveryAddress.postalCode)).toEqual(['02134', '02134']);
  });

  it('a mapped export names its own columns', async () => {
    const mapping = parseMapping(
      lines(
        'delimiter: ";"',
        'columns: { Auftrag: orderNumber, Liefertermin: dateDue, PLZ: postalCode, Land: country, Artikel: code, Menge: quantity }',
        'constants: { deliveryMethod: UPSGND, contactName: Ann, streetAddress: 1 Main St, city: Dresden, itemType: Asset }',
      ),
      'erp.yaml',
    );
    const r = await loadText(
      lines('Auftrag;Liefertermin;PLZ;Land;Artikel;Menge', 'A-1;46363;1099;Deutschland;A10001;25'),
      'erp.csv',
      {
        mapping,
      },
    );
    expect(seen(r.diagnostics)).toEqual([
      'warning postal-code.leading-zero 2:PLZ',
      'error date.excel-serial 2:Liefertermin',
    ]);
    expect(r.manifest?.jobs[0].deliveryAddress.postalCode).toBe('01099');
  });

  it('digits a spreadsheet lost: a phone left out with a warning; a postal code, a SKU or an order number refused', async () => {
    const r = await loadText(
      lines(
        'orderNumber,deliveryMethod,contactName,phone,streetAddress,city,postalCode,country,itemType,code,quantity',
        'PO-1,UPSGND,Ann,"1,61756E+10",1 Main St,Boston,02134,US,Asset,A10001,25',
        'PO-2,UPSGND,Ann,16175550142000000,1 Main St,Boston,2.1345E+04,US,Asset,A10001,25',
        'PO-3,UPSGND,Ann,617-555-0142,1 Main St,Boston,02134,US,Stock,1.23457E+11,25',
        '1234567890123450000,UPSGND,Ann,,1 Main St,Boston,02134,US,Asset,3E10,25',
      ),
      'orders.csv',
    );
    expect(seen(r.diagnostics)).toEqual([
      'warning phone.scientific 2:phone',
      'warning phone.truncated 3:phone',
      'error postal-code.scientific 3:postalCode',
      'error item-code.scientific 4:code',
      'error order-number.truncated 5:orderNumber',
    ]);
    expect(r.manifest?.jobs.map((j) => j.deliveryAddress.phone)).toEqual([
      undefined,
      undefined,
      '617-555-0142',
      undefined,
    ]);
    expect(r.diagnostics[0].message).toBe(
      '"1,61756E+10" is a number in scientific notation, as a spreadsheet shows a long phone number: its real digits are lost: the order is sent without it. Export again without opening the file in a spreadsheet, or format the column as Text before saving',
    );
    expect(r.diagnostics[4].message).toContain('ends in zeros after its 15th digit');
  });

  it('an .xlsx whose ZIP column holds numbers', async () => {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Orders');
    ws.addRow(CSV_HEADER.split(','));
    ws.addRow(['PO-1', null, 'UPSGND', 'Ann', '1 Main St', 'Boston', 2134, 'US', 'Asset', 'A10001', 25]);
    const file = `${await tempDirPerTest()}/orders.xlsx`;
    await wb.xlsx.writeFile(file);
    const r = await loadManifest(file);
    expect(seen(r.diagnostics)).toEqual(['warning postal-code.leading-zero 2:postalCode']);
    expect(r.manifest?.jobs[0].deliveryAddress.postalCode).toBe('02134');
  });

  it("a mapping's zeroPaddedColumns: fewer digits padded back, once per value, with a warning at the mapping's line", async () => {
    const file = `${await tempDirPerTest()}/shop.yaml`;
    const mapping = parseMapping(
      lines(
        'fields: { orderNumber: "`Order`", code: "`SKU`", quantity: "$integer(Qty)" }',
        'constants: { deliveryMethod: UPSGND, contactName: Ann, streetAddress: 1 Main St, city: X, itemType: Asset }',
        'zeroPaddedColumns: { Order: 6 }',
      ),
      file,
    );
    const r = await loadText(
      lines(
        'Order,SKU,Qty',
        '412,A10001,1',
        '412,A10002,2',
        '000413,A10001,3',
        '1000414,A10001,4',
        'W-9,A10001,5',
        '7,A10001,6',
      ),
      'shop.csv',
      { mapping },
    );
    expect(r.manifest?.jobs.map((j) => j.orderNumber)).toEqual(['000412', '000413', '1000414', 'W-9', '000007']);
    expect(seen(r.diagnostics)).toEqual([
      'warning mapping.leading-zeros 2:Order',
      'warning mapping.leading-zeros 7:Order',
    ]);
    expect(r.diagnostics[0].message).toBe(
      `"412" has three digits; this export writes Order with at least six digits (${file}:3:20), so a spreadsheet dropped its leading zeros: read as "000412". Export again without opening the file in a spreadsheet, or format the column as Text before saving`,
    );
    expect(r.diagnostics[1].message).toMatch(/^"7" has one digit; /);
  });

  it('zeroPaddedColumns naming a column the export lacks is an error at the mapping', async () => {
    const mapping = parseMapping(
      lines('extends: squarespace', 'zeroPaddedColumns: { Order Number: 5 }'),
      `${await tempDirPerTest()}/mine.yaml`,
    );
    const r = await loadText(await readFile(join(ROOT, 'samples/squarespace/orders.csv'), 'utf8'), 'orders.csv', {
      mapping,
    });
    expect(r.diagnostics.map((d) => [d.code, d.message])).toContainEqual([
      'mapping.unknown-column',
      expect.stringMatching(/^zeroPaddedColumns names column "Order Number", which is not in the header/),
    ]);
  });
});
