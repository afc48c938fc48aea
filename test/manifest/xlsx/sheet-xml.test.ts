/**
 * Workbooks as their XML stores them, written part by part: every kind of cell and how it
 * reads, the shapes other writers give the same data (prefixed elements, cells and rows without
 * references, rows shorter than the header), and XML built to make the parser hold more than
 * the row it is in. Plus a round trip: whatever exceljs's own writer stores, the reader reads.
 */
import fc from 'fast-check';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import { type XlsxScanProblem, xlsxRows } from '../../../src/manifest/xlsx/scan-xlsx.js';
import { errors } from '../../support/manifest-files.js';
import { tempDirPerTest } from '../../support/temp-files.js';
import { HEAD, HEADER, ITEM, type PartText, partsOf, ROW, zipOf } from '../../support/workbooks.js';

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** A one-sheet workbook ("Orders") of hand-written parts; `x` writes every element prefixed `x:`. */
async function book(
  sheetData: PartText,
  { styles, strings, x = '' }: { styles?: string; strings?: string; x?: '' | 'x:' } = {},
): Promise<string> {
  const ns = x === '' ? `xmlns="${MAIN}"` : `xmlns:x="${MAIN}"`;
  const data = typeof sheetData === 'string' ? [{ text: sheetData }] : sheetData;
  const parts = new Map<string, PartText>([
    [
      'xl/workbook.xml',
      `<?xml version="1.0" encoding="UTF-8"?><${x}workbook ${ns} xmlns:r="${REL}"><${x}sheets>` +
        `<${x}sheet name="Orders" sheetId="1" r:id="rId1"/></${x}sheets></${x}workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    ],
    [
      'xl/worksheets/sheet1.xml',
      [
        { text: `<?xml version="1.0" encoding="UTF-8"?><${x}worksheet ${ns}><${x}sheetData>` },
        ...data,
        { text: `</${x}sheetData></${x}worksheet>` },
      ],
    ],
  ]);
  if (styles !== undefined) parts.set('xl/styles.xml', `<${x}styleSheet ${ns}>${styles}</${x}styleSheet>`);
  if (strings !== undefined) parts.set('xl/sharedStrings.xml', `<${x}sst ${ns}>${strings}</${x}sst>`);
  return zipOf(parts);
}

async function read(file: string): Promise<{ rows: string[][]; problems: XlsxScanProblem[] }> {
  const problems: XlsxScanProblem[] = [];
  const rows: string[][] = [];
  for await (const row of xlsxRows(file, {}, problems)) rows.push([String(row.row), ...row.cells]);
  return { rows, problems };
}

const inline = (ref: string, text: string): string => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;

describe('cells as the sheet stores them', () => {
  it('booleans, errors, formulas’ cached results of each type, rich text, ISO dates, styles’ built-in date formats', async () => {
    const styles =
      '<numFmts count="1"><numFmt numFmtId="164" formatCode="00000"/></numFmts>' +
      '<cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs>' + // not a cell's style
      '<cellXfs count="4"><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="31"/><xf numFmtId="164"/></cellXfs>' +
      '<dxfs count="1"><dxf><numFmt numFmtId="164" formatCode="yyyy"/></dxf></dxfs>'; // a conditional format's
    const strings =
      '<si><r><t>東</t></r><r><rPr><b/></rPr><t>京</t></r><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si>' +
      '<si><t xml:space="preserve"> Ann &amp; Lee </t></si><si><t><![CDATA[a<b]]></t></si>';
    const cells = [
      '<c r="A2" t="b"><v>1</v></c>',
      '<c r="B2" t="b"><v>0</v></c>',
      '<c r="C2" t="e"><v>#N/A</v></c>',
      '<c r="D2" t="str"><f>A1&amp;"x"</f><v>hx</v></c>',
      '<c r="E2" t="b"><f>TRUE()</f><v>1</v></c>',
      '<c r="F2" t="e"><f>1/0</f><v>#DIV/0!</v></c>',
      '<c r="G2"><f>1+1</f><v>2</v></c>',
      '<c r="H2" t="inlineStr"><is><r><t>Ann </t></r><r><rPr><b/></rPr><t>Lee</t></r></is></c>',
      '<c r="I2" t="d"><v>2026-12-04T00:00:00</v></c>',
      '<c r="J2" t="d"><v>2026-12-04T09:30:00Z</v></c>',
      '<c r="K2"><f>NA()</f></c>',
      '<c r="L2"><v>1.5E+3</v></c>',
      '<c r="M2" s="1"><v>46360</v></c>',
      '<c r="N2" s="2"><v>46360.5</v></c>',
      '<c r="O2" s="3"><v>2134</v></c>',
      '<c r="P2" t="s"><v>0</v></c>',
      '<c r="Q2" t="s"><v>1</v></c>',
      '<c r="R2" t="s"><v>2</v></c>',
      '<c r="S2" s="1"><f>TODAY()</f><v>46360</v></c>',
      '<c r="T2"><v>0x10</v></c>',
    ];
    const file = await book(`<row r="1">${inline('A1', 'h')}</row><row r="2">${cells.join('')}</row>`, {
      styles,
      strings,
    });
    const { rows, problems } = await read(file);
    expect(problems).toEqual([]);
    expect(rows[1]).toEqual([
      '2',
      'TRUE',
      'FALSE',
      '#N/A',
      'hx',
      'TRUE',
      '#DIV/0!',
      '2',
      'Ann Lee',
      '2026-12-04',
      '2026-12-04T09:30:00',
      '',
      '1500',
      '2026-12-04',
      '2026-12-04T12:00:00',
      '02134',
      '東京',
      ' Ann & Lee ',
      'a<b',
      '2026-12-04',
      '0x10',
    ]);
  });

  it('a cell that refers to a shared string the table lacks is an error at its cell, never an empty cell', async () => {
    const file = await book(`<row r="1">${inline('A1', 'h')}</row><row r="2"><c r="A2" t="s"><v>5</v></c></row>`, {
      strings: '<si><t>only</t></si>',
    });
    const { problems } = await read(file);
    expect(problems).toEqual([
      {
        code: 'xlsx.unreadable',
        message:
          'cannot read the workbook: xl/worksheets/sheet1.xml (sheet "Orders", after row 1): ' +
          'cell A2: shared string "5" is not in the table (it holds 1) ' +
          '(is it an .xlsx file saved by Excel or a compatible program?)',
      },
    ]);
  });

  it('a character split between two unpacked chunks of a part is read whole', async () => {
    // 20,000 two-byte letters, twice, one byte apart: each run crosses a 16 KiB chunk boundary,
    // and the two runs are of opposite alignment, so one of them has a letter cut in two.
    const long = `${'é'.repeat(20_000)}x${'é'.repeat(20_000)}`;
    const file = await book(`<row r="1"><c r="A1" t="s"><v>0</v></c></row>`, { strings: `<si><t>${long}</t></si>` });
    const { rows } = await read(file);
    expect(rows[0][1] === long).toBe(true);
  });
});

describe('the shapes other writers give a sheet', () => {
  it('elements with a namespace prefix (x:row, x:c) read as plain ones', async () => {
    const rows = `<x:row r="1">${inline('A1', 'h').replaceAll('<', '<x:').replaceAll('<x:/', '</x:')}</x:row>`;
    const file = await book(rows, { x: 'x:' });
    expect((await read(file)).rows).toEqual([['1', 'h']]);
  });

  it('cells and rows without references follow the one before', async () => {
    const row = (cells: string): string => `<row>${cells}</row>`;
    const file = await book(
      row('<c t="inlineStr"><is><t>a</t></is></c><c><v>2</v></c>') +
        '<row r="5"><c r="C5"><v>3</v></c><c><v>4</v></c></row>' +
        row('<c><v>5</v></c>'),
    );
    expect((await read(file)).rows).toEqual([
      ['1', 'a', '2'],
      ['5', '', '', '3', '4'],
      ['6', '5', ''],
    ]);
  });

  it('a row whose last cells are blank (not stored) is read as wide as the header, and checks', async () => {
    // Excel stores no blank cell: the last column, empty on a row, leaves that row shorter.
    const file = await zipOf(
      await partsOf([
        [...HEADER, ...HEAD, 'customerReference'],
        [...ROW, ...ITEM],
      ]),
    );
    const { manifest, diagnostics } = await loadManifest(file);
    expect(errors(diagnostics)).toEqual([]);
    expect(manifest?.jobs[0].items).toHaveLength(1);
    // A row wider than the header is still refused.
    const wide = await zipOf(
      await partsOf([
        [...HEADER, ...HEAD],
        [...ROW, ...ITEM, 'extra'],
      ]),
    );
    expect(errors((await loadManifest(wide)).diagnostics).map((d) => d.code)).toEqual(['csv.row-length']);
  });
});

describe('XML built to make the parser hold more than a row', () => {
  it('a cell whose text hides `<row` in CDATA is still stopped at the row’s XML limit', async () => {
    const piece = `${'x'.repeat(1024 * 1024)}<row r="9">`;
    const file = await book([
      { text: `<row r="1">${inline('A1', 'h')}</row><row r="2"><c r="A2" t="inlineStr"><is><t><![CDATA[` },
      { text: piece, times: 20 },
      { text: ']]></t></is></c></row>' },
    ]);
    const { rows, problems } = await read(file);
    expect(rows).toEqual([['1', 'h']]);
    expect(problems).toEqual([
      {
        code: 'xlsx.limit',
        message:
          'xl/worksheets/sheet1.xml (sheet "Orders", after row 1): ' +
          "a row's XML runs past 9437184 bytes (limit csvMaxRecordBytes)",
      },
    ]);
  }, 30_000);

  it('elements nested past 100 deep, or one element with over 1,000 attributes, are refused', async () => {
    const deep = await book(`<row r="1"><c r="A1">${'<a>'.repeat(200)}${'</a>'.repeat(200)}</c></row>`);
    expect((await read(deep)).problems.map((p) => p.message)).toEqual([
      expect.stringMatching(
        /^cannot read the workbook: xl\/worksheets\/sheet1\.xml \(sheet "Orders"\): elements are nested more than 100 deep at line 1, column \d+ of the part/,
      ),
    ]);
    const attributes = Array.from({ length: 1001 }, (_, i) => ` a${i}=""`).join('');
    const wide = await book(`<row r="1"><c r="A1"${attributes}><v>1</v></c></row>`);
    expect((await read(wide)).problems.map((p) => p.message)).toEqual([
      expect.stringContaining('an element has more than 1000 attributes at line 1'),
    ]);
  });
});

describe('whatever exceljs’s writer stores, the reader reads', () => {
  // Text a cell can hold in XML 1.0 (no control characters; a carriage return is a line end).
  const text = fc
    .string({ unit: 'grapheme', maxLength: 12 })
    .filter((s) => ![...s].some((c) => c < ' ' && c !== '\t' && c !== '\n') && !/_x[0-9a-f]{4}_/i.test(s));
  const value = fc.oneof(
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
  );
  const shown = (v: string | number | boolean | null): string =>
    v === null ? '' : typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : String(Object.is(v, -0) ? 0 : v);

  it('text, numbers, booleans and gaps, cell for cell (property)', async () => {
    const dir = await tempDirPerTest();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(value, { minLength: 1, maxLength: 8 }), async (cells) => {
        const wb = new ExcelJS.Workbook();
        const ws = wb.addWorksheet('Orders');
        ws.addRow(['id', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']);
        ws.addRow(['row', ...cells]);
        const file = `${dir}/${n++}.xlsx`;
        await wb.xlsx.writeFile(file);
        const { rows, problems } = await read(file);
        expect(problems).toEqual([]);
        const expected = ['2', 'row', ...cells.map(shown)];
        while (expected.length < 10) expected.push('');
        expect(rows[1]).toEqual(expected);
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
