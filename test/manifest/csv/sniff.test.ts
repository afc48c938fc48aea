import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import { sepLine, sniffBytes, sniffDelimiter } from '../../../src/manifest/csv/sniff.js';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import { parseMapping } from '../../../src/manifest/mapping/load-mapping.js';
import { lines, tempFiles } from '../../support/temp-files.js';

/** Delimited text read by its content: not text at all, its encoding, its separator. */
const files = tempFiles();

describe('sniffDelimiter', () => {
  it('a German Excel CSV: semicolons, decimal commas in the cells', () => {
    const text = lines('Auftrag;Menge;Preis;Land', 'A-1;24;12,50;DE', 'A-2;6;1.234,00;DE', 'A-3;1;0,99;AT');
    expect(sniffDelimiter(text, true)).toBe(';');
  });

  it('a tab-separated marketplace report whose names and addresses hold commas', () => {
    const text = lines(
      'order-id\torder-item-id\tproduct-name\tship-address-1',
      '111-1\t1\tCrest Transfer, 10" x 10", full colour\tSuite 5, 1 Main St',
      '111-2\t2\tTee\t2 Oak Ave',
    );
    expect(sniffDelimiter(text, true)).toBe('\t');
  });

  it('commas, with semicolons inside some cells and a quoted cell holding tabs and line breaks', () => {
    const text = lines('orderNumber,description,code', 'PO-1,a;b;c;d,A1', 'PO-2,"x\ty\nz;w",A1', 'PO-3,plain,A1');
    expect(sniffDelimiter(text, true)).toBe(',');
  });

  it("eBay's framing: a row of bare commas, the header, an empty row, rows, footer lines", () => {
    const text = lines(
      ',,,,,',
      'Sales Record Number,Order Number,Buyer Username,Item Number,Quantity,Sold For',
      ',,,,,',
      '101,12-00001-00001,ann,1234,2,$4.00',
      '102,12-00001-00002,bo,1235,1,"$1,004.00"',
      '',
      '2,record(s) downloaded,"from Nov-20-26 to Nov-22-26"',
      'Seller ID : teamprint',
    );
    expect(sniffDelimiter(text, true)).toBe(',');
  });

  it('one column: a comma; a header only: the separator splitting it into more cells', () => {
    expect(sniffDelimiter(lines('orderNumber', 'PO-1'), true)).toBe(',');
    expect(sniffDelimiter('a;b;c,d\n1;2', false)).toBe(';');
  });

  it('an Excel `sep=` first line names the separator', () => {
    expect(sepLine('sep=;\r\na;b\n')).toEqual({ delimiter: ';', length: 7 });
    expect(sepLine('separator;b\n')).toBeUndefined();
  });

  it('a `sep=` line written as a quoted one-cell record names the separator too', () => {
    expect(sepLine('"sep=;"\r\na;b\n')).toEqual({ delimiter: ';', length: 9 });
    expect(sepLine('"sep=\t"\na\tb\n')).toEqual({ delimiter: '\t', length: 8 });
    expect(sepLine('"sep=;\na;b\n')).toBeUndefined();
  });
});

describe('sniffBytes', () => {
  it.each([
    ['%PDF-1.7\n', 'a PDF document'],
    ['\x89PNG\r\n\x1a\n', 'a PNG image'],
    ['\xff\xd8\xff\xe0', 'a JPEG image'],
    ['PK\x03\x04', 'a zip archive, such as an Excel workbook'],
    ['\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1', 'an Excel 97–2003 workbook (.xls)'],
    ['abc\x00\x01\x02\x03\x00\x00\x00', 'binary data'],
  ])('%j is not text', (bytes, what) => {
    const verdict = sniffBytes(Buffer.from(bytes, 'latin1'));
    expect(verdict.text).toBe(false);
    expect(!verdict.text && verdict.message).toContain(`not a text file: it looks like ${what}`);
  });

  it('byte-order marks, and UTF-16 without one told by its NUL bytes', () => {
    expect(sniffBytes(Buffer.from('\ufeffa,b', 'utf8'))).toEqual({ text: true, encoding: 'utf-8', bom: 3 });
    expect(sniffBytes(iconv.encode('a\tb', 'utf-16le', { addBOM: true }))).toEqual({
      text: true,
      encoding: 'utf-16le',
      bom: 2,
    });
    expect(sniffBytes(iconv.encode('order-id\tsku\n', 'utf-16le'))).toMatchObject({ encoding: 'utf-16le' });
    expect(sniffBytes(iconv.encode('order-id\tsku\n', 'utf-16be'))).toMatchObject({ encoding: 'utf-16be' });
    expect(sniffBytes(Buffer.from('a,b\n'))).toEqual({ text: true, bom: 0 });
  });
});

describe('reading by content', () => {
  const ORDER = lines(
    'orderNumber\tdeliveryMethod\tcontactName\tcity\titemType\tcode\tquantity',
    'PO-1\tUPS Ground\tJürgen Müller\tKöln\tAsset\tA1\t12',
  );

  it('Excel\'s "Unicode text" (UTF-16 LE with a BOM, tabs), under any extension', async () => {
    for (const name of ['orders.txt', 'orders.tsv', 'orders.csv']) {
      const file = await files.write(name, iconv.encode(ORDER, 'utf-16le', { addBOM: true }));
      const r = await loadManifest(file);
      expect(r.diagnostics).toEqual([]);
      expect(r.manifest?.jobs[0].deliveryAddress).toMatchObject({ contactName: 'Jürgen Müller', city: 'Köln' });
      expect(r.manifest?.csv?.read).toEqual({ delimiter: '\t', encoding: 'utf-16le' });
    }
  });

  it('UTF-16 BE without a byte-order mark; Windows-1252 with semicolons', async () => {
    const be = await readCsvDocument(await files.write('be.csv', iconv.encode(ORDER, 'utf-16be')));
    expect(be.diagnostics).toEqual([]);
    expect(be.csv?.read).toEqual({ delimiter: '\t', encoding: 'utf-16be' });
    const ansi = iconv.encode(ORDER.replaceAll('\t', ';'), 'windows-1252');
    const cp = await readCsvDocument(await files.write('ansi.csv', ansi));
    expect(cp.diagnostics).toEqual([]);
    expect(cp.csv?.read).toEqual({ delimiter: ';', encoding: 'windows-1252' });
    expect((cp.doc as { jobs: Array<{ deliveryAddress: object }> }).jobs[0].deliveryAddress).toMatchObject({
      city: 'Köln',
    });
  });

  it('yes/no columns read the words a spreadsheet writes in its language', async () => {
    const csv = ORDER.replaceAll('\t', ';')
      .replace('quantity', 'quantity;timeSensitive;isSaturdayDelivery')
      .replace(/12$/m, '12;WAHR;FALSCH');
    const r = await loadManifest(await files.write('de.csv', iconv.encode(csv, 'windows-1252')));
    expect(r.diagnostics).toEqual([]);
    expect(r.manifest?.jobs[0].timeSensitive).toBe(true);
    expect(r.manifest?.jobs[0].deliveryAddress.isSaturdayDelivery).toBe(false);
  });

  it('an Excel `sep=;` line is read past, and rows keep their physical numbers', async () => {
    const file = await files.write('sep.csv', `sep=;\n${ORDER.replaceAll('\t', ';').replace('\n', '\n\n')}`);
    const r = await loadManifest(file);
    expect(r.diagnostics).toEqual([]);
    expect(r.manifest?.csv?.itemRows).toEqual([[4]]);
  });

  it('a `sep=;` line is read past when a mapping declares the separator too', async () => {
    const file = await files.write('declared.csv', `sep=;\r\n${ORDER.replaceAll('\t', ';')}`);
    const mapping = parseMapping('version: 1\ndelimiter: ";"\n', await files.write('m.yaml', ''));
    const r = await loadManifest(file, { mapping });
    expect(r.diagnostics).toEqual([]);
    expect(r.manifest?.csv?.itemRows).toEqual([[3]]);
  });

  it('a quoted `"sep=;"` line is read past the same way, rows keeping their physical numbers', async () => {
    const csv = `"sep=;"\r\n${ORDER.replaceAll('\t', ';').replace('\n', '\r\n\r\n').replace('12', '0')}`;
    const r = await loadManifest(await files.write('quoted-sep.csv', csv));
    expect(r.manifest?.csv?.read?.delimiter).toBe(';');
    expect(r.diagnostics).toMatchObject([{ severity: 'error', source: { row: 4, columnName: 'quantity' } }]);
  });

  it('a PDF or an image renamed .csv or .txt is "not a text file", not an encoding problem', async () => {
    const pdf = await files.write('orders.csv', Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n', 'latin1'));
    const r = await loadManifest(pdf);
    expect(r.diagnostics).toMatchObject([{ severity: 'error', code: 'csv.not-text' }]);
    expect(r.diagnostics[0].message).toBe(
      'not a text file: it looks like a PDF document. An order export is delimited text (.csv, .tsv, .txt) or an .xlsx workbook',
    );
    expect(r.diagnostics[0].source).toEqual({ file: pdf });
    const png = await files.write('orders.txt', Buffer.from('\x89PNG\r\n\x1a\n\0\0\0\rIHDR', 'latin1'));
    expect((await loadManifest(png)).diagnostics[0].message).toContain('a PNG image');
  });
});
