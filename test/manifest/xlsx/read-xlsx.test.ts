import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import { parseMapping } from '../../../src/manifest/mapping/load-mapping.js';
import { readXlsxDocument } from '../../../src/manifest/xlsx/read-xlsx.js';
import { ZipArchive } from '../../../src/manifest/xlsx/zip-directory.js';
import { errors } from '../../support/manifest-files.js';
import { tempDirPerTest } from '../../support/temp-files.js';
import { unpacked } from '../../support/workbooks.js';

const HEADER = [
  'orderNumber',
  'dateDue',
  'deliveryMethod',
  'contactName',
  'streetAddress',
  'city',
  'state',
  'postalCode',
  'country',
  'itemType',
  'code',
  'quantity',
];

type Cell = string | number | Date | null;

/** Writes a workbook with the given sheets (name → rows) using exceljs's own writer. */
async function workbook(
  sheets: Record<string, Cell[][]>,
  style?: (ws: ExcelJS.Worksheet) => void,
  compression: 'DEFLATE' | 'STORE' = 'DEFLATE',
): Promise<string> {
  const wb = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) {
    const ws = wb.addWorksheet(name);
    for (const r of rows) ws.addRow(r);
    style?.(ws);
  }
  const file = `${await tempDirPerTest()}/orders.xlsx`;
  await wb.xlsx.writeFile(file, { zip: { compression } });
  return file;
}

/** Rewrites the unpacked size the zip directory declares for one part, as a lying zip bomb would. */
async function declareUnpacked(file: string, part: string, bytes: number): Promise<void> {
  const zip = await readFile(file);
  const signature = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
  for (let p = zip.indexOf(signature); p >= 0; p = zip.indexOf(signature, p + 4)) {
    if (zip.toString('utf8', p + 46, p + 46 + zip.readUInt16LE(p + 28)) === part) {
      zip.writeUInt32LE(bytes, p + 24);
      await writeFile(file, zip);
      return;
    }
  }
  throw new Error(`no ${part} in ${file}`);
}

/**
 * Replaces text inside a workbook saved without compression by text of the same length, as a
 * damaged part would read (the reader checks no CRC, so only the part's content changes).
 */
async function overwrite(file: string, from: string, to: string): Promise<void> {
  expect(Buffer.byteLength(to)).toBe(Buffer.byteLength(from));
  const zip = await readFile(file);
  const at = zip.indexOf(from);
  if (at < 0) throw new Error(`no ${from} in ${file}`);
  zip.write(to, at);
  await writeFile(file, zip);
}

const ROW: Cell[] = [
  'PO-1',
  new Date(Date.UTC(2026, 11, 4)),
  'UPSGND',
  'Ann Lee',
  '1 Main St',
  'Boston',
  'MA',
  '02134',
  'US',
  'Asset',
  'A10001',
  24,
];

describe('.xlsx inputs', () => {
  it('read like a CSV: text kept (leading zeros), numbers as numbers, dates as ISO dates, sheet row numbers', async () => {
    const file = await workbook({
      Orders: [HEADER, ROW, ['PO-1', null, null, null, null, null, null, null, null, 'Asset', 'A10002', 12]],
    });
    const { manifest, diagnostics, input } = await loadManifest(file);
    expect(errors(diagnostics)).toEqual([]);
    expect(input.format).toBe('xlsx');
    // The hash is of the workbook's bytes, read through the same open file as its parts.
    expect(input.sha256).toBe(
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex'),
    );
    const job = manifest?.jobs[0];
    expect(job?.dateDue).toBe('2026-12-04');
    expect(job?.deliveryAddress.postalCode).toBe('02134');
    expect(job?.items.map((i) => [i.code, i.quantity])).toEqual([
      ['A10001', 24],
      ['A10002', 12],
    ]);
    expect(manifest?.csv?.itemRows).toEqual([[2, 3]]);
    expect(manifest?.sources.locate('jobs[0].items[1].quantity')).toEqual({ file, row: 3, columnName: 'quantity' });
  });

  it('a number formatted 00000 (Excel’s Zip Code format) reads as the padded text the sheet shows', async () => {
    const file = await workbook({ Orders: [HEADER, [...ROW.slice(0, 7), 2134, ...ROW.slice(8)]] }, (ws) => {
      ws.getCell('H2').numFmt = '00000';
    });
    const { manifest, diagnostics } = await loadManifest(file);
    expect(errors(diagnostics)).toEqual([]);
    expect(manifest?.jobs[0].deliveryAddress.postalCode).toBe('02134');
  });

  it('reads the first sheet by default and a named one through the mapping’s sheet:', async () => {
    const notes: Cell[][] = [['just notes']];
    const file = await workbook({ Notes: notes, Orders: [HEADER, ROW] });
    const first = await loadManifest(file);
    expect(errors(first.diagnostics).map((d) => d.code)).toContain('csv.missing-column');
    const mapping = parseMapping('sheet: Orders\n', 'm.yaml');
    const named = await loadManifest(file, { mapping });
    expect(errors(named.diagnostics)).toEqual([]);
    expect(named.manifest?.jobs[0].orderNumber).toBe('PO-1');
  });

  it("a mapping written for the CSV's decimal commas reads the workbook's number cells as the numbers they are", async () => {
    const file = await workbook({
      Aufträge: [
        ['Auftrag', 'Artikel', 'Menge', 'Breite'],
        ['PO-1', 'A10001', 24, 10.5],
        ['PO-2', 'A10001', 12, '12,5'],
        ['PO-3', 'A10001', 2.5, 1.234],
      ],
    });
    const yaml = [
      'ignoreUnmapped: true',
      'fields:',
      '  orderNumber: Auftrag',
      '  itemType: \'"Asset"\'',
      '  code: Artikel',
      '  quantity: \'$integer(Menge, ",")\'',
      '  orderComment: \'"Breite " & $string($decimal(Breite, ","))\'',
      '',
    ].join('\n');
    const { manifest, diagnostics } = await loadManifest(file, { mapping: parseMapping(yaml, 'm.yaml') });
    const jobs = manifest?.jobs ?? [];
    expect(jobs.map((j) => [j.orderNumber, j.orderComment, j.items[0]?.quantity])).toEqual([
      ['PO-1', 'Breite 10.5', 24],
      ['PO-2', 'Breite 12.5', 12],
      ['PO-3', 'Breite 1.234', '2.5'],
    ]);
    // 2.5 is no quantity, never 25.
    expect(errors(diagnostics).map((d) => [d.source?.row, d.message])).toContainEqual([
      4,
      expect.stringContaining('"2.5" is not a whole number'),
    ]);
  });

  // exceljs stores xl/workbook.xml last: a reader going front to back through the archive must
  // keep every part until it gets there, however fast parts saved without compression arrive.
  it('a workbook saved without compression reads the same every time (its last part is never lost)', async () => {
    const file = await workbook({ Notes: [['just notes']], Orders: [HEADER, ROW] }, undefined, 'STORE');
    for (let i = 0; i < 10; i++) {
      const first = errors((await loadManifest(file)).diagnostics).map((d) => d.code);
      expect(first).toContain('csv.missing-column'); // the Notes sheet, first in tab order, was read
      expect(first).not.toContain('xlsx.unreadable');
      const named = await loadManifest(file, { mapping: parseMapping('sheet: Orders\n', 'm.yaml') });
      expect(errors(named.diagnostics)).toEqual([]);
      expect(named.manifest?.jobs[0].orderNumber).toBe('PO-1');
    }
  });

  it('names the sheets there are when the named one is missing', async () => {
    const file = await workbook({ Orders: [HEADER, ROW] });
    const { diagnostics } = await loadManifest(file, { mapping: parseMapping('sheet: Bestellungen\n', 'm.yaml') });
    expect(errors(diagnostics)).toEqual([
      expect.objectContaining({
        code: 'xlsx.sheet',
        message: 'the workbook has no sheet named "Bestellungen"; its sheets are: "Orders"',
      }),
    ]);
  });

  it('a workbook that would unpack past the limit is refused before it is unpacked', async () => {
    const file = await workbook({ Orders: [HEADER, ROW] });
    expect((await readXlsxDocument(file)).doc).toBeDefined();
    // One part declared at 3 GB: the archive is refused on its directory alone.
    await declareUnpacked(file, 'xl/worksheets/sheet1.xml', 3 * 1024 ** 3);
    const archive = await ZipArchive.open(file);
    const unpacked = archive.directory?.unpackedBytes;
    await archive.close();
    expect(unpacked).toBeGreaterThan(3 * 1024 ** 3);
    const raw = await readXlsxDocument(file);
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['input.too-large', `the workbook unpacks to ${unpacked} bytes, over the 2147483648-byte limit for .xlsx`],
    ]);
  });

  it('a part that unpacks past the size its zip directory declares is stopped, not unpacked', async () => {
    const file = await workbook({ Orders: [HEADER, ROW] });
    await declareUnpacked(file, 'xl/worksheets/sheet1.xml', 100);
    const raw = await readXlsxDocument(file);
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics.map((d) => [d.code, d.message])).toEqual([
      [
        'xlsx.unreadable',
        'cannot read the workbook: xl/worksheets/sheet1.xml (sheet "Orders"): ' +
          'the part unpacks past the 100 bytes its zip directory declares ' +
          '(is it an .xlsx file saved by Excel or a compatible program?)',
      ],
    ]);
  });

  it('a part that unpacks to less than its zip directory declares is refused', async () => {
    const file = await workbook({ Orders: [HEADER, ROW] });
    const archive = await ZipArchive.open(file);
    const actual = archive.directory?.entries.get('xl/worksheets/sheet1.xml')?.unpackedBytes ?? 0;
    await archive.close();
    await declareUnpacked(file, 'xl/worksheets/sheet1.xml', actual + 100);
    const raw = await readXlsxDocument(file);
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics.map((d) => [d.code, d.message])).toEqual([
      [
        'xlsx.unreadable',
        'cannot read the workbook: xl/worksheets/sheet1.xml (sheet "Orders"): ' +
          `the part unpacks to ${actual} bytes, not the ${actual + 100} its zip directory declares ` +
          '(is it an .xlsx file saved by Excel or a compatible program?)',
      ],
    ]);
  });

  it('a broken sheet part names the file, the part, the sheet and the last row read before it', async () => {
    const file = await workbook({ Orders: [HEADER, ...Array.from({ length: 1500 }, () => ROW)] }, undefined, 'STORE');
    await overwrite(file, '<row r="1200" ', '<row r="1200"<');
    const { diagnostics, manifest } = await loadManifest(file);
    expect(manifest).toBeUndefined();
    expect(errors(diagnostics)).toEqual([
      {
        severity: 'error',
        code: 'xlsx.unreadable',
        message: expect.stringMatching(
          /^cannot read the workbook: xl\/worksheets\/sheet1\.xml \(sheet "Orders", after row 1199\): disallowed character in attribute name at line \d+, column \d+ of the part \(is it/,
        ),
        source: { file },
      },
    ]);
  });

  it('a small broken sheet (parsed in one piece) names its part, its sheet and the row before the break', async () => {
    const file = await workbook({ Orders: [HEADER, ROW, ROW] }, undefined, 'STORE');
    await overwrite(file, '<row r="3" ', '<row r="3"<');
    const { diagnostics } = await loadManifest(file);
    expect(errors(diagnostics).map((d) => d.message)).toEqual([
      expect.stringMatching(/^cannot read the workbook: xl\/worksheets\/sheet1\.xml \(sheet "Orders", after row 2\): /),
    ]);
  });

  it('a broken shared-strings part is named', async () => {
    const file = await workbook({ Orders: [HEADER, ROW] }, undefined, 'STORE');
    await overwrite(file, '<t>Ann Lee</t>', '<t>Ann<Lee</t>');
    const { diagnostics } = await loadManifest(file);
    expect(errors(diagnostics).map((d) => d.message)).toEqual([
      expect.stringMatching(
        /^cannot read the workbook: xl\/sharedStrings\.xml: .+ at line \d+, column \d+ of the part/,
      ),
    ]);
  });

  it('a file that is not a workbook is an error, not a crash', async () => {
    const file = `${await tempDirPerTest()}/broken.xlsx`;
    await writeFile(file, 'orderNumber,code\nPO-1,A10001\n');
    const { diagnostics, manifest } = await loadManifest(file);
    expect(manifest).toBeUndefined();
    expect(errors(diagnostics).map((d) => d.code)).toEqual(['xlsx.unreadable']);
  });
});

/** A zip of `parts` (name → text), stored uncompressed, in the order given. */
async function zipOf(parts: Array<[string, string]>): Promise<string> {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of parts) {
    const nameBytes = Buffer.from(name);
    const data = Buffer.from(text);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(nameBytes.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    central.push(entry, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  const file = `${await tempDirPerTest()}/orders.xlsx`;
  await writeFile(file, Buffer.concat([...locals, directory, end]));
  return file;
}

describe('.xlsx inputs as other writers store them', () => {
  it('sheet parts by any name, relationships with absolute targets, sheets stored before the shared strings', async () => {
    const parts = await unpacked(await workbook({ Notes: [['just notes']], Orders: [HEADER, ROW] }));
    // As openpyxl writes them: absolute targets; parts named otherwise; the sheets first in the archive.
    const rels = (parts.get('xl/_rels/workbook.xml.rels') as string)
      .replace('Target="worksheets/sheet1.xml"', 'Target="/xl/worksheets/notes.xml"')
      .replace('Target="worksheets/sheet2.xml"', 'Target="/xl/worksheets/orders.xml"');
    expect(rels).toContain('/xl/worksheets/orders.xml');
    const renamed: Array<[string, string]> = [
      ['xl/worksheets/orders.xml', parts.get('xl/worksheets/sheet2.xml') as string],
      ['xl/worksheets/notes.xml', parts.get('xl/worksheets/sheet1.xml') as string],
      ...[...parts].filter(([name]) => !/^xl\/worksheets\/sheet\d\.xml$|workbook\.xml\.rels$/.test(name)),
      ['xl/_rels/workbook.xml.rels', rels],
    ];
    const file = await zipOf(renamed);
    const first = await loadManifest(file);
    expect(errors(first.diagnostics).map((d) => d.code)).toContain('csv.missing-column'); // Notes, first in tab order
    const named = await loadManifest(file, { mapping: parseMapping('sheet: Orders\n', 'm.yaml') });
    expect(errors(named.diagnostics)).toEqual([]);
    expect(named.manifest?.jobs[0]).toMatchObject({ orderNumber: 'PO-1', dateDue: '2026-12-04' });
  });

  it('a workbook without shared strings (inline text) and one counting dates from 1904', async () => {
    const parts = await unpacked(await workbook({ Orders: [HEADER, ROW] }));
    const strings = [...(parts.get('xl/sharedStrings.xml') as string).matchAll(/<t[^>]*>([^<]*)<\/t>/g)].map(
      (m) => m[1],
    );
    // Each shared-string cell written inline instead; the part itself left out.
    const sheet = (parts.get('xl/worksheets/sheet1.xml') as string).replace(
      /<c r="([A-Z]+\d+)"([^>]*) t="s"([^>]*)><v>(\d+)<\/v><\/c>/g,
      (_, ref, a, b, i) => `<c r="${ref}"${a} t="inlineStr"${b}><is><t>${strings[Number(i)]}</t></is></c>`,
    );
    expect(sheet).toContain('inlineStr');
    const inline = await zipOf([
      ...[...parts].filter(([name]) => name !== 'xl/sharedStrings.xml' && name !== 'xl/worksheets/sheet1.xml'),
      ['xl/worksheets/sheet1.xml', sheet],
    ]);
    const read = await loadManifest(inline);
    expect(errors(read.diagnostics)).toEqual([]);
    expect(read.manifest?.jobs[0]).toMatchObject({ orderNumber: 'PO-1', dateDue: '2026-12-04' });

    // The same serial day number read in the 1904 date system is 1,462 days later.
    const book = (parts.get('xl/workbook.xml') as string).replace(
      /<workbookPr([^>]*?)\/>/,
      '<workbookPr$1 date1904="1"/>',
    );
    expect(book).toContain('date1904="1"');
    const in1904 = await zipOf([
      ...[...parts].filter(([name]) => name !== 'xl/workbook.xml'),
      ['xl/workbook.xml', book],
    ]);
    const later = await loadManifest(in1904);
    expect(later.manifest?.jobs[0].dateDue).toBe('2030-12-05');
  });
});
