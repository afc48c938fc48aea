/**
 * Hostile workbooks, small on disk: number formats that cost time or memory per cell, a text
 * table that unpacks to hundreds of megabytes, cells and rows of megabytes. Each stops with a
 * located error, bounded in time by the test's timeout (the unfixed reader took minutes) and in
 * memory by what it never unpacks.
 */
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import { isDateFormat } from '../../../src/manifest/xlsx/number-formats.js';
import { xlsxRows } from '../../../src/manifest/xlsx/scan-xlsx.js';
import { ZipArchive } from '../../../src/manifest/xlsx/zip-directory.js';
import { errors } from '../../support/manifest-files.js';
import { formatted, HEAD, HEADER, ITEM, type PartText, partsOf, ROW, zipOf } from '../../support/workbooks.js';

describe('hostile number formats', () => {
  it('Excel’s date-format test looks at each character of a format once, whatever its brackets', () => {
    // The regex it replaces looked again from every unclosed `[`: hours for these.
    expect(isDateFormat('['.repeat(1_000_000))).toBe(false);
    expect(isDateFormat(`${'['.repeat(1_000_000)}yyyy`)).toBe(true);
    expect(isDateFormat('"'.repeat(1_000_001))).toBe(false);
    expect(isDateFormat('[$-409]dd/mm/yyyy;@')).toBe(true);
    expect(isDateFormat('[Red]0.00;"dd"0')).toBe(false);
    expect(isDateFormat('General')).toBe(false);
    expect(isDateFormat('[h]:mm')).toBe(true);
  }, 10_000);

  it('a format of 100,000 `[` on every quantity is refused before a cell is read', async () => {
    const file = await formatted('['.repeat(100_000));
    const { manifest, diagnostics } = await loadManifest(file);
    expect(manifest).toBeUndefined();
    expect(errors(diagnostics).map((d) => [d.code, d.message])).toEqual([
      ['xlsx.limit', 'xl/styles.xml: a number format is 100000 characters long, over the 255 Excel allows'],
    ]);
  }, 20_000);

  it('a format of 1,000,000 zeros (each cell padded to a megabyte) is refused', async () => {
    const file = await formatted('0'.repeat(1_000_000));
    const { diagnostics } = await loadManifest(file);
    expect(errors(diagnostics).map((d) => d.code)).toEqual(['xlsx.limit']);
  }, 20_000);

  it('formats within the limit keep their meaning: dates, zero padding, anything else a plain number', async () => {
    const hostile = '['.repeat(250);
    for (const [format, value, read] of [
      ['[$-409]dd/mm/yyyy;@', 46360, '2026-12-04'],
      ['00000', 2134, '02134'],
      ['#,##0.00', 1234.5, '1234.5'],
      [hostile, 7, '7'],
      [`${hostile.slice(5)}yyyy`, 46360, '2026-12-04'],
    ] as const) {
      const parts = await partsOf([['orderNumber'], [value]], (ws) => {
        ws.getCell('A2').numFmt = format;
      });
      const rows = [];
      for await (const row of xlsxRows(await zipOf(parts), {})) rows.push(row.cells);
      expect(rows).toEqual([['orderNumber'], [read]]);
    }
  });
});

describe('hostile sizes', () => {
  it('a cell written in the sheet itself (inline) stops before the parser holds it; an escaped 900 kB one reads', async () => {
    const parts: Map<string, PartText> = await partsOf([['orderNumber']]);
    const sheet = parts.get('xl/worksheets/sheet1.xml') as string;
    const [before, after] = sheet.split('</sheetData>');
    const inline = (text: PartText): PartText => [
      { text: `${before}<row r="2"><c r="A2" t="inlineStr"><is><t>` },
      ...(typeof text === 'string' ? [{ text }] : text),
      { text: `</t></is></c></row></sheetData>${after}` },
    ];
    parts.set('xl/worksheets/sheet1.xml', inline([{ text: 'x'.repeat(1024 * 1024), times: 300 }]));
    const huge = await zipOf(parts);
    const { diagnostics } = await loadManifest(huge);
    expect(errors(diagnostics).map((d) => [d.code, d.message])).toEqual([
      [
        'xlsx.limit',
        'xl/worksheets/sheet1.xml (sheet "Orders", after row 1): ' +
          "a row's XML runs past 9437184 bytes (limit csvMaxRecordBytes)",
      ],
    ]);
    // Each `&amp;` is one byte of text: 4.5 MB of XML, 900 kB of text, within both limits.
    parts.set('xl/worksheets/sheet1.xml', inline([{ text: '&amp;'.repeat(1000), times: 900 }]));
    const rows = [];
    for await (const row of xlsxRows(await zipOf(parts), {})) rows.push(row.cells.map((c) => c.length));
    expect(rows).toEqual([[11], [900_000]]);
  }, 60_000);

  it('a text table honestly declaring 130 MiB is refused on its zip directory, before it is unpacked', async () => {
    const parts: Map<string, PartText> = await partsOf([
      [...HEADER, ...HEAD],
      [...ROW, ...ITEM],
    ]);
    const open =
      '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">';
    const strings = (parts.get('xl/sharedStrings.xml') as string).replace(/^[\s\S]*?<sst[^>]*>/, '');
    const filler = '<si><t>x</t></si>'.repeat(4096);
    const times = Math.ceil((130 * 1024 * 1024) / filler.length);
    parts.set('xl/sharedStrings.xml', [{ text: open }, { text: filler, times }, { text: strings }]);
    const file = await zipOf(parts);
    const archive = await ZipArchive.open(file);
    const declared = archive.directory?.entries.get('xl/sharedStrings.xml')?.unpackedBytes ?? 0;
    expect(archive.size).toBeLessThan(2 * 1024 * 1024);
    await archive.close();
    expect(declared).toBeGreaterThan(130 * 1024 * 1024);
    const before = process.memoryUsage().heapUsed;
    const { diagnostics } = await loadManifest(file);
    expect(errors(diagnostics).map((d) => [d.code, d.message])).toEqual([
      [
        'input.too-large',
        `xl/sharedStrings.xml unpacks to ${declared} bytes, over the 134217728-byte limit for a part read whole`,
      ],
    ]);
    // Read, the table would hold some 200 MB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(100 * 1024 * 1024);
  }, 60_000);

  it('a cell of 2 MB (40 cells pointing at it) stops at its row and column, under csvMaxRecordBytes', async () => {
    const huge = 'x'.repeat(2 * 1024 * 1024);
    const parts = await partsOf([
      [...HEADER, ...HEAD],
      [huge, ...Array.from({ length: 39 }, () => huge)],
    ]);
    const file = await zipOf(parts);
    const { manifest, diagnostics } = await loadManifest(file);
    expect(manifest).toBeUndefined();
    expect(errors(diagnostics)).toEqual([
      {
        severity: 'error',
        code: 'xlsx.limit',
        message: `sheet "Orders": column A: this row's cells are over the 1048576-byte limit (limit csvMaxRecordBytes)`,
        source: { file, row: 2 },
      },
    ]);
  }, 30_000);

  it('a row whose cells add up past the limit stops at the cell that passes it; the setting raises it', async () => {
    const cell = 'é'.repeat(50_000); // 100,000 bytes as UTF-8
    const parts = await partsOf([[...HEADER, ...HEAD], [...ROW, ...ITEM], Array.from({ length: 12 }, () => cell)]);
    const file = await zipOf(parts);
    const { diagnostics } = await loadManifest(file);
    expect(errors(diagnostics).map((d) => [d.source, d.message])).toEqual([
      [
        { file, row: 3 },
        `sheet "Orders": column K: this row's cells are over the 1048576-byte limit (limit csvMaxRecordBytes)`,
      ],
    ]);
    const raised = await loadManifest(file, { csv: { maxRecordBytes: 2 * 1024 * 1024 } });
    expect(errors(raised.diagnostics).map((d) => d.code)).not.toContain('xlsx.limit');
  }, 30_000);
});
