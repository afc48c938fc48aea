import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CSV_CHUNK_BYTES, readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import type { Mapping } from '../../../src/manifest/mapping/model.js';
import type { Diagnostic } from '../../../src/manifest/model.js';
import { lines, tempFiles } from '../../support/temp-files.js';

const files = tempFiles();

type Doc = { version: 1; jobs: Array<Record<string, any>> };
const read = async (name: string, content: string | Uint8Array, mapping?: Mapping) => {
  const file = await files.write(name, content);
  const r = await readCsvDocument(file, mapping === undefined ? {} : { mapping });
  return { ...r, doc: r.doc as Doc | undefined, file };
};
const codes = (ds: Diagnostic[]) => ds.map((d) => d.code);

const HEAD = 'orderNumber,deliveryMethod,city,itemType,code,quantity';

describe('readCsvDocument: default template', () => {
  it('groups rows by orderNumber, adjacent or not, in order of first appearance', async () => {
    const r = await read(
      'group.csv',
      lines(
        HEAD,
        'PO-1,UPS Ground,Austin,Asset,A10001,50',
        'PO-2,UPSGND,Dallas,Asset,A10002,20',
        'PO-1,,,Stock,GD5000,',
        'PO-2,,,Asset,A10003,30',
      ),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.format).toBe('csv');
    expect(r.doc?.version).toBe(1);
    expect(r.doc?.jobs.map((j) => j.orderNumber)).toEqual(['PO-1', 'PO-2']);
    expect(r.doc?.jobs[0]).toEqual({
      orderNumber: 'PO-1',
      deliveryAddress: { deliveryMethod: 'UPS Ground', city: 'Austin' },
      items: [
        { itemType: 'Asset', code: 'A10001', quantity: 50 },
        { itemType: 'Stock', code: 'GD5000' },
      ],
    });
    expect(r.csv?.itemRows).toEqual([
      [2, 4],
      [3, 5],
    ]);
    expect(r.csv?.header).toEqual(HEAD.split(','));
    expect(r.csv?.skipRows).toBe(0);
  });

  it('hashes the exact input bytes', async () => {
    const r = await read('hash.csv', lines(HEAD, 'PO-1,UPS Ground,Austin,Asset,A10001,50'));
    expect(r.sha256).toBe(
      createHash('sha256')
        .update(await readFile(r.file))
        .digest('hex'),
    );
  });

  it('places every template column at its level and types the typed ones', async () => {
    const header =
      'orderNumber,description,orderComment,dateDue,mustDate,promocode,customerUserId,deliveryMethod,contactName,organisation,phone,mobile,emailAddress,' +
      'shippingInstructions,streetAddress,address2,suburb,city,state,postalCode,country,itemType,code,quantity,customerReference,externalArtworkUrl,' +
      'externalId,isSample,garment,comment,variantCode,orderGroup,orderGroupSequence,countryCodeISO2,stateCode,timeSensitive,isSaturdayDelivery,' +
      'locationCodeOverride,groupHead,group';
    const row =
      'PO-9,Kit,Rush,2026-12-04,YES,SPRING10,502,UPS Ground,Ana,Club,555,556,a@b.c,Leave at door,1 Main St,Suite 2,Downtown,Austin,Texas,01234,' +
      'United States,PriceCode,"DTF Full Color 10"" x 10""",100,front,https://x/y.png,ext-1,no,Tee,hello,V1,G-1,2,US,TX,1,False,LOC1,H1,G1';
    const r = await read('all.csv', lines(header, row));
    expect(r.diagnostics).toEqual([]);
    expect(r.doc?.jobs[0]).toEqual({
      orderNumber: 'PO-9',
      description: 'Kit',
      orderComment: 'Rush',
      dateDue: '2026-12-04',
      mustDate: true,
      timeSensitive: true,
      promocode: 'SPRING10',
      customerUserId: 502,
      orderGroup: 'G-1',
      orderGroupSequence: 2,
      locationCodeOverride: 'LOC1',
      deliveryAddress: {
        deliveryMethod: 'UPS Ground',
        shippingInstructions: 'Leave at door',
        contactName: 'Ana',
        organisation: 'Club',
        phone: '555',
        mobile: '556',
        emailAddress: 'a@b.c',
        isSaturdayDelivery: false,
        streetAddress: '1 Main St',
        address2: 'Suite 2',
        suburb: 'Downtown',
        city: 'Austin',
        state: 'Texas',
        stateCode: 'TX',
        postalCode: '01234', // text stays text: the leading zero survives
        country: 'United States',
        countryCodeISO2: 'US',
      },
      items: [
        {
          itemType: 'PriceCode',
          code: 'DTF Full Color 10" x 10"',
          quantity: 100,
          customerReference: 'front',
          groupHead: 'H1',
          group: 'G1',
          externalArtworkUrl: 'https://x/y.png',
          externalId: 'ext-1',
          isSample: false,
          garment: 'Tee',
          comment: 'hello',
          variantCode: 'V1',
        },
      ],
    });
  });

  it('reads bare double quotes inside unquoted cells as text (price codes contain them)', async () => {
    const r = await read('quotes.csv', lines(HEAD, 'PO-1,UPS Ground,Austin,PriceCode,DTF Full Color 10" x 10",10'));
    expect(r.diagnostics).toEqual([]);
    expect(r.doc?.jobs[0].items[0].code).toBe('DTF Full Color 10" x 10"');
  });

  it('maps attr:NAME and size:CODE columns and merges sizeQuantities cells', async () => {
    const r = await read(
      'sizes.csv',
      lines(
        'orderNumber,itemType,code,attr:Colors,attr:Notes,variantCode,size:2XL,sizeQuantities',
        'PO-1,PriceCode,DTF,4,hi there,,,',
        'PO-1,Stock,GD5000,,,GD5000-BLK,3, S=10; M=20 ;',
      ),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.doc?.jobs[0].items).toEqual([
      { itemType: 'PriceCode', code: 'DTF', attributes: { Colors: '4', Notes: 'hi there' } },
      { itemType: 'Stock', code: 'GD5000', variantCode: 'GD5000-BLK', sizeQuantities: { '2XL': 3, S: 10, M: 20 } },
    ]);
    expect(r.sources.locate('jobs[0].items[1].sizeQuantities.2XL')).toEqual({
      file: r.file,
      row: 3,
      columnName: 'size:2XL',
    });
    expect(r.sources.locate('jobs[0].items[1].sizeQuantities.S')).toEqual({
      file: r.file,
      row: 3,
      columnName: 'sizeQuantities',
    });
    expect(r.sources.locate('jobs[0].items[0].attributes.Notes')).toEqual({
      file: r.file,
      row: 2,
      columnName: 'attr:Notes',
    });
  });

  it('reads a file of many chunks whole, in order, and hashes every byte (reads overlap parsing)', async () => {
    // ~4.5 read chunks, rows of several widths, a quoted cell with a line break and an order whose rows are apart.
    const rows = [HEAD];
    for (let n = 0; rows.join('\n').length < 4.5 * CSV_CHUNK_BYTES; n++) {
      rows.push(`PO-${n},UPSGND,"Austin\nTX",Asset,A${n},${n + 1}`, `PO-${n},,,Stock,GD5000,`);
    }
    rows.push('PO-0,,,Asset,LAST,7');
    const r = await read('chunks.csv', lines(...rows));
    expect(r.diagnostics).toEqual([]);
    expect(r.sha256).toBe(
      createHash('sha256')
        .update(await readFile(r.file))
        .digest('hex'),
    );
    const jobs = r.doc?.jobs ?? [];
    expect(jobs.length).toBe((rows.length - 2) / 2);
    expect(jobs[0].items.map((i: { code: string }) => i.code)).toEqual(['A0', 'GD5000', 'LAST']);
    const lastJob = jobs.length - 1;
    expect(jobs[lastJob]).toMatchObject({ orderNumber: `PO-${lastJob}`, deliveryAddress: { city: 'Austin\nTX' } });
    expect(jobs[lastJob].items).toEqual([
      { itemType: 'Asset', code: `A${lastJob}`, quantity: lastJob + 1 },
      { itemType: 'Stock', code: 'GD5000' },
    ]);
    // Each record takes two physical lines (the quoted line break), the one after it one.
    expect(r.sources.locate(`jobs[${lastJob}].items[1]`)).toEqual({ file: r.file, row: 2 + 3 * lastJob + 2 });
  });

  it('reads integers as numbers whatever their length, and leaves what is not one as text', async () => {
    const r = await read(
      'integers.csv',
      lines(
        HEAD,
        'PO-1,UPSGND,Austin,Asset,A1,007',
        'PO-1,,,Asset,A1,123456789',
        'PO-1,,,Asset,A1,1234567890123',
        'PO-1,,,Asset,A1,+5',
        'PO-1,,,Asset,A1,12345678901234567890',
        'PO-1,,,Asset,A1,１２',
        'PO-1,,,Asset,A1,1.5',
        'PO-1,,,Asset,A1,0',
      ),
    );
    expect(r.doc?.jobs[0].items.map((i: { quantity: unknown }) => i.quantity)).toEqual([
      7,
      123456789,
      1234567890123,
      5,
      '12345678901234567890',
      '１２',
      '1.5',
      0,
    ]);
  });

  it('gives sizes the key order of a plain object, however many different runs of sizes a file has', async () => {
    const rows = ['orderNumber,itemType,code,size:XL,sizeQuantities'];
    rows.push('PO-1,Stock,G,1,S=2;10=3;M=4', 'PO-1,Stock,G,,M=1;S=2', 'PO-1,Stock,G,5,8=1');
    // More distinct runs of size names than are compacted: the rest keep their sizes all the same.
    for (let n = 0; n < 5000; n++) rows.push(`PO-2,Stock,G,,Z${n}=${n + 1};A=1`);
    const r = await read('size-order.csv', lines(...rows));
    expect(r.diagnostics).toEqual([]);
    const [first, second] = r.doc?.jobs ?? [];
    const plain = (pairs: Array<[string, number]>) => {
      const o: Record<string, number> = {};
      for (const [k, v] of pairs) o[k] = v;
      return o;
    };
    const sizes = first.items.map((i: { sizeQuantities: object }) => i.sizeQuantities);
    expect(sizes.map((s: object) => JSON.stringify(s))).toEqual([
      JSON.stringify(
        plain([
          ['XL', 1],
          ['S', 2],
          ['10', 3],
          ['M', 4],
        ]),
      ),
      JSON.stringify(
        plain([
          ['M', 1],
          ['S', 2],
        ]),
      ),
      JSON.stringify(
        plain([
          ['XL', 5],
          ['8', 1],
        ]),
      ),
    ]);
    expect(second.items.length).toBe(5000);
    second.items.forEach((item: { sizeQuantities: object }, n: number) => {
      expect(JSON.stringify(item.sizeQuantities)).toBe(JSON.stringify({ [`Z${n}`]: n + 1, A: 1 }));
    });
  });

  it('reports a size given both in sizeQuantities and a size: column, and malformed cells, at the cell', async () => {
    const r = await read(
      'dupsize.csv',
      lines(
        'orderNumber,itemType,code,size:M,sizeQuantities',
        'PO-1,Stock,GD5000,5,S=1;M=2',
        'PO-1,Stock,GD5000,,S10',
        'PO-1,Stock,GD5000,,S=1;S=2',
        'PO-1,Stock,GD5000,,S=ten',
      ),
    );
    expect(r.diagnostics).toMatchObject([
      {
        code: 'csv.duplicate-size',
        field: 'jobs[0].items[0].sizeQuantities.M',
        source: { row: 2, columnName: 'sizeQuantities' },
      },
      {
        code: 'csv.size-quantities',
        field: 'jobs[0].items[1].sizeQuantities',
        source: { row: 3, columnName: 'sizeQuantities' },
      },
      { code: 'csv.size-quantities', message: 'size S is given twice', source: { row: 4 } },
    ]);
    expect(r.diagnostics[1].message).toContain('"S10" is not SIZE=QUANTITY');
    // A non-integer quantity is data for the schema to judge, not a syntax error.
    expect(r.doc?.jobs[0].items[3].sizeQuantities).toEqual({ S: 'ten' });
  });

  it('leaves badly typed cells as strings so schema validation reports them at the cell', async () => {
    const r = await read(
      'typed.csv',
      lines(
        'orderNumber,customerUserId,mustDate,itemType,code,quantity,size:M',
        'PO-1,12a,maybe,Asset,A1,12.5,x',
        'PO-2,+7,TRUE,Asset,A1,-3,007',
      ),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.doc?.jobs[0]).toMatchObject({
      customerUserId: '12a',
      mustDate: 'maybe',
      items: [{ quantity: '12.5', sizeQuantities: { M: 'x' } }],
    });
    expect(r.doc?.jobs[1]).toMatchObject({
      customerUserId: 7,
      mustDate: true,
      items: [{ quantity: -3, sizeQuantities: { M: 7 } }],
    });
    expect(r.sources.locate('jobs[0].items[0].quantity')).toEqual({ file: r.file, row: 2, columnName: 'quantity' });
    expect(r.sources.locate('jobs[0].customerUserId')).toEqual({ file: r.file, row: 2, columnName: 'customerUserId' });
  });

  it('treats blank and whitespace-only cells as absent and trims values', async () => {
    const r = await read(
      'blank.csv',
      lines('orderNumber,description,city,itemType,code,quantity', ' PO-1 ,  ,  Austin ,Asset,A1,  '),
    );
    expect(r.doc?.jobs[0]).toEqual({
      orderNumber: 'PO-1',
      deliveryAddress: { city: 'Austin' },
      items: [{ itemType: 'Asset', code: 'A1' }],
    });
  });

  it('reports a job-level conflict naming both rows, keeps the first value, and locates it', async () => {
    const r = await read(
      'conflict.csv',
      lines(
        HEAD,
        'PO-1001,UPS Ground,Dallas,Asset,A1,1',
        'PO-2,UPS Ground,Austin,Asset,A1,1',
        'PO-1001,,,Asset,A2,1',
        'PO-1001,,dallas,Asset,A3,1',
        'PO-1001,,Dallas,Asset,A3,1',
        'PO-1001,,Austin,Asset,A4,1',
      ),
    );
    expect(r.diagnostics).toHaveLength(2);
    expect(r.diagnostics[0]).toMatchObject({
      severity: 'error',
      code: 'csv.conflict',
      field: 'jobs[0].deliveryAddress.city',
      source: { file: r.file, row: 5, columnName: 'city' },
    });
    expect(r.diagnostics[0].message).toMatch(/^"dallas" conflicts with "Dallas" on row 2 of order PO-1001/);
    expect(r.diagnostics[1].message).toMatch(/^"Austin" conflicts with "Dallas" on row 2 of order PO-1001/);
    expect(r.diagnostics[1].source?.row).toBe(7);
    expect(r.doc?.jobs[0].deliveryAddress.city).toBe('Dallas');
    expect(r.sources.locate('jobs[0].deliveryAddress.city')).toEqual({ file: r.file, row: 2, columnName: 'city' });
  });

  it('compares typed job values: yes and TRUE agree, a job field first set on a later row is located there', async () => {
    const r = await read(
      'agree.csv',
      lines('orderNumber,mustDate,description,itemType,code', 'PO-1,yes,,Asset,A1', 'PO-1,TRUE,Kit,Asset,A2'),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.sources.locate('jobs[0].description')).toEqual({ file: r.file, row: 3, columnName: 'description' });
    expect(r.sources.locate('jobs[0].dateDue')).toEqual({ file: r.file, row: 2 }); // no column: the job's first row
  });

  it('locates job fields set on a first or a later row in any block of jobs (5,000 jobs)', async () => {
    // The table of "row that set it" keeps later rows per block of 4,096 jobs: both blocks here.
    const rows = ['orderNumber,description,city,itemType,code'];
    for (let o = 0; o < 5000; o++) {
      if (o === 4500 || o === 7) {
        rows.push(`PO-${o},,,Asset,A1`, `PO-${o},Kit,Austin,Asset,A2`, `PO-${o},Other,,Asset,A3`);
      } else rows.push(`PO-${o},Kit ${o},Dallas,Asset,A1`);
    }
    const r = await read('blocks.csv', lines(...rows));
    // Jobs 7 and 4500 have three rows, so every later job starts two rows further down.
    const first = (o: number) => 2 + o + (o > 7 ? 2 : 0) + (o > 4500 ? 2 : 0);
    expect(r.diagnostics.map((d) => [d.field, d.source?.row, d.message.split(' (')[0]])).toEqual(
      [7, 4500].map((o) => [
        `jobs[${o}].description`,
        first(o) + 2,
        `"Other" conflicts with "Kit" on row ${first(o) + 1} of order PO-${o}`,
      ]),
    );
    for (const o of [7, 4500]) {
      expect(r.sources.locate(`jobs[${o}].description`)).toMatchObject({ row: first(o) + 1 });
      expect(r.sources.locate(`jobs[${o}].deliveryAddress.city`)).toMatchObject({ row: first(o) + 1 });
      expect(r.sources.locate(`jobs[${o}].dateDue`)).toEqual({ file: r.file, row: first(o) });
    }
    for (const o of [0, 4095, 4096, 4999]) {
      expect(r.sources.locate(`jobs[${o}].description`)).toEqual({
        file: r.file,
        row: first(o),
        columnName: 'description',
      });
      expect(r.sources.locate(`jobs[${o}].deliveryAddress.city`)).toMatchObject({ row: first(o), columnName: 'city' });
    }
  });

  it('rejects unknown columns with a suggestion, including case and short forms', async () => {
    const r = await read(
      'unknown.csv',
      lines('orderNumber,Organisation,qty,itemType,code,cuntry,attr-Colors,foo', 'PO-1,Club,5,Asset,A1,US,4,x'),
    );
    expect(r.diagnostics.map((d) => d.message)).toEqual([
      'unknown column "Organisation"; did you mean "organisation"?',
      'unknown column "qty"; did you mean "quantity"?',
      'unknown column "cuntry"; did you mean "country"?',
      'unknown column "attr-Colors"; did you mean "attr:Colors"?',
      'unknown column "foo"',
    ]);
    expect(r.diagnostics[0]).toMatchObject({
      code: 'csv.unknown-column',
      source: { file: r.file, row: 1, columnName: 'Organisation' },
    });
    // Known columns are still read, so other problems surface in the same run.
    expect(r.doc?.jobs[0].items[0]).toEqual({ itemType: 'Asset', code: 'A1' });
  });

  it('reads a semicolon- or tab-separated file by its content', async () => {
    for (const [name, sep] of [
      ['semi.csv', ';'],
      ['tabs.txt', '\t'],
    ]) {
      const r = await read(name, lines(`orderNumber${sep}itemType${sep}code`, `PO-1${sep}Asset${sep}A1,5`));
      expect(r.diagnostics).toEqual([]);
      expect(r.doc?.jobs[0].items[0]).toEqual({ itemType: 'Asset', code: 'A1,5' });
      expect(r.csv?.read).toEqual({ delimiter: sep, encoding: 'utf-8' });
    }
  });

  it('hints at the delimiter when the header is one cell separated by something else', async () => {
    const r = await read('pipes.csv', lines('orderNumber|itemType|code', 'PO-1|Asset|A1'));
    expect(r.diagnostics.map((d) => d.code)).toEqual(['csv.unknown-column', 'csv.missing-column']);
    expect(r.diagnostics[0].message).toContain('--mapping with a "delimiter"');
    expect(r.doc).toBeUndefined();
  });

  it('reports duplicate header columns', async () => {
    const r = await read('dupcol.csv', lines('orderNumber,code,itemType,code', 'PO-1,A1,Asset,A2'));
    expect(r.diagnostics).toMatchObject([{ code: 'csv.duplicate-column', source: { row: 1, columnName: 'code' } }]);
    expect(r.doc?.jobs[0].items[0].code).toBe('A1');
  });

  it('reports row-length mismatches at the row, but accepts extra blank trailing cells', async () => {
    const r = await read(
      'len.csv',
      lines('orderNumber,itemType,code', 'PO-1,Asset', 'PO-1,Asset,A2,,', 'PO-1,Asset,A3,oops'),
    );
    expect(r.diagnostics).toMatchObject([
      {
        code: 'csv.row-length',
        message: 'row has 2 cells, the header has 3',
        field: 'jobs[0].items[0]',
        source: { row: 2 },
      },
      {
        code: 'csv.row-length',
        message: 'row has 4 cells, the header has 3',
        field: 'jobs[0].items[2]',
        source: { row: 4 },
      },
    ]);
  });

  it('gives a row without an orderNumber a job of its own, for the schema to report', async () => {
    const r = await read('noorder.csv', lines('orderNumber,itemType,code', ',Asset,A1', ',Asset,A2', 'PO-1,Asset,A3'));
    expect(r.doc?.jobs).toEqual([
      { deliveryAddress: {}, items: [{ itemType: 'Asset', code: 'A1' }] },
      { deliveryAddress: {}, items: [{ itemType: 'Asset', code: 'A2' }] },
      { orderNumber: 'PO-1', deliveryAddress: {}, items: [{ itemType: 'Asset', code: 'A3' }] },
    ]);
    expect(r.sources.locate('jobs[1].orderNumber')).toEqual({ file: r.file, row: 3, columnName: 'orderNumber' });
  });

  it('needs an orderNumber column', async () => {
    const r = await read('nocol.csv', lines('itemType,code', 'Asset,A1'));
    expect(codes(r.diagnostics)).toEqual(['csv.missing-column']);
    expect(r.doc).toBeUndefined();
  });

  it('reports an empty file and a header-only file as "no rows"', async () => {
    const empty = await read('empty.csv', '');
    expect(codes(empty.diagnostics)).toEqual(['csv.no-rows']);
    expect(empty.doc).toBeUndefined();
    const blankLines = await read('blanks.csv', '\n\n  \n');
    expect(codes(blankLines.diagnostics)).toEqual(['csv.no-rows']);
    const headerOnly = await read('header.csv', lines(HEAD, '', ',,,,,'));
    expect(headerOnly.diagnostics).toMatchObject([
      { code: 'csv.no-rows', message: 'the file has a header but no rows', source: { row: 1 } },
    ]);
    expect(headerOnly.doc).toBeUndefined();
  });

  it('skips blank lines (also all-empty cells) while keeping physical row numbers', async () => {
    const r = await read(
      'gaps.csv',
      '\n' + lines(HEAD, '', 'PO-1,UPS Ground,Austin,Asset,A1,1', ',,,,,', '   ', 'PO-1,,,Asset,A2,2'),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.csv?.itemRows).toEqual([[4, 7]]);
    expect(r.sources.locate('jobs[0]')).toEqual({ file: r.file, row: 4 });
    expect(r.sources.locate('version')).toEqual({ file: r.file, row: 2 }); // the header row
  });

  it('numbers rows by physical line when quoted cells contain LF and CRLF newlines', async () => {
    const content =
      'orderNumber,description,itemType,code,comment\r\n' +
      'PO-1,"two\r\nlines",Asset,A1,x\r\n' +
      'PO-1,,Asset,A2,"a\nb\r\nc"\r\n' +
      '\r\n' +
      'PO-2,,Asset,A3,\r\n' +
      'PO-2,,Asset,"A4",'; // no final newline
    const r = await read('multiline.csv', content);
    expect(r.diagnostics).toEqual([]);
    expect(r.csv?.itemRows).toEqual([
      [2, 4],
      [8, 9],
    ]);
    expect(r.doc?.jobs[0].description).toBe('two\r\nlines');
    expect(r.doc?.jobs[0].items[1].comment).toBe('a\nb\r\nc');
  });

  it('reports an unclosed quote at the row where the record starts, with no document', async () => {
    const r = await read(
      'unclosed.csv',
      lines(HEAD, 'PO-1,UPS Ground,Austin,Asset,A1,1', 'PO-1,"UPS Ground,Austin,Asset,A2,1', 'PO-1,,,Asset,A3,1'),
    );
    expect(r.diagnostics).toMatchObject([{ code: 'csv.parse', source: { file: r.file, row: 3 } }]);
    expect(r.diagnostics[0].message).toContain('Quote Not Closed');
    expect(r.doc).toBeUndefined();
  });

  it('reads a Windows-1252 ("ANSI") file with no mapping', async () => {
    const bytes = Buffer.concat([
      Buffer.from(lines(HEAD, 'PO-1,UPS Ground,Austin,Asset,A1,1') + 'PO-2,UPS Ground,M'),
      Buffer.from([0xfc]),
      Buffer.from('nchen,Asset,A1,1\n'),
    ]);
    const r = await read('latin1.csv', bytes);
    expect(r.diagnostics).toEqual([]);
    expect(r.doc?.jobs[1].deliveryAddress.city).toBe('München');
    expect(r.csv?.read).toEqual({ delimiter: ',', encoding: 'windows-1252' });
  });

  it('reports a file declared UTF-8 that is not, near the right row', async () => {
    const bytes = Buffer.concat([
      Buffer.from(lines(HEAD, 'PO-1,UPS Ground,Austin,Asset,A1,1') + 'PO-2,UPS Ground,M'),
      Buffer.from([0xfc]),
      Buffer.from('nchen,Asset,A1,1\n'),
    ]);
    const r = await read('latin1-declared.csv', bytes, { encoding: 'utf-8' });
    expect(r.diagnostics).toMatchObject([{ code: 'csv.encoding', source: { row: 3 } }]);
    expect(r.diagnostics[0].message).toContain('"encoding"');
  });

  it('reports a missing file as a diagnostic, not a throw', async () => {
    const r = await readCsvDocument('/nonexistent/dir/orders.csv');
    expect(r.diagnostics).toMatchObject([{ code: 'io.read', message: expect.stringContaining('ENOENT') }]);
    expect(r.doc).toBeUndefined();
  });

  it('caps repeated diagnostics of one kind and says how many were left out', async () => {
    const rows = Array.from({ length: 1005 }, (_, i) => `PO-${i},Asset`);
    const r = await read('many.csv', lines('orderNumber,itemType,code', ...rows));
    expect(r.diagnostics).toHaveLength(1001);
    expect(r.diagnostics[1000].message).toBe('… and 5 more csv.row-length problems (only the first 1000 are listed)');
  });
});
