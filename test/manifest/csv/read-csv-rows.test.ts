import fc from 'fast-check';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import { csvRows } from './csv-rows.js';
import { tempFiles } from '../../support/temp-files.js';

const files = tempFiles();

async function collect(file: string, opts = {}) {
  return (await csvRows(file, opts)).rows;
}

async function readCsvHeader(file: string, opts = {}) {
  return (await csvRows(file, opts)).header;
}

describe('scanCsvFile: the records read again for result.csv', () => {
  it("yields data rows verbatim (untrimmed, quotes resolved) with the reader's row numbers", async () => {
    const content =
      '\uFEFForderNumber,itemType,code,comment\r\n PO-1 ,Asset,A1,"say ""hi"",\r\nthere"\r\n\r\nPO-2,Asset,A2,  \r\n';
    const file = await files.write('rows.csv', content);
    const rows = await collect(file);
    expect(rows).toEqual([
      { row: 2, cells: [' PO-1 ', 'Asset', 'A1', 'say "hi",\r\nthere'] },
      { row: 5, cells: ['PO-2', 'Asset', 'A2', '  '] },
    ]);
    const doc = await readCsvDocument(file);
    expect(doc.csv?.itemRows.flat()).toEqual(rows.map((r) => r.row));
    expect(await readCsvHeader(file)).toEqual({ header: ['orderNumber', 'itemType', 'code', 'comment'], row: 1 });
  });

  it('decodes with the mapping (UTF-16, skipped rows, delimiter) like the reader', async () => {
    const file = await files.write(
      'rows16.csv',
      iconv.encode('banner\nPO_NUM;ITEM\nRO-1;A1\n', 'utf-16le', { addBOM: true }),
    );
    const mapping = {
      delimiter: ';',
      skipRows: 1,
      encoding: 'utf-16' as const,
      columns: { PO_NUM: 'orderNumber', ITEM: 'code' },
    };
    expect(await collect(file, { mapping })).toEqual([{ row: 3, cells: ['RO-1', 'A1'] }]);
    expect(await readCsvHeader(file, { mapping })).toEqual({ header: ['PO_NUM', 'ITEM'], row: 2 });
  });

  it('returns no header for an empty file', async () => {
    expect(await readCsvHeader(await files.write('empty.csv', ''))).toBeUndefined();
  });

  it('round-trips any cells and counts physical rows exactly (property)', async () => {
    const cell = fc
      .array(fc.constantFrom('a', 'Z', ' ', ',', '"', '\n', '\r\n', 'é', '日', ';'), { maxLength: 6 })
      .map((cs) => cs.join(''));
    const table = fc.array(fc.tuple(cell, cell), { minLength: 1, maxLength: 12 });
    const blanks = fc.array(fc.nat(2), { minLength: 13, maxLength: 13 });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(table, blanks, fc.constantFrom('\n', '\r\n'), async (rows, gaps, eol) => {
        const quote = (c: string) => (/[",\r\n]/.test(c) || c.trim() === '' ? `"${c.replace(/"/g, '""')}"` : c);
        let text = `h1,h2,h3${eol}`;
        let line = 2;
        const expected: Array<{ row: number; cells: string[] }> = [];
        rows.forEach((cells, i) => {
          text += eol.repeat(gaps[i]);
          line += gaps[i];
          const all = [`r${i}`, ...cells]; // a non-blank first cell: blank records are skipped by design
          expected.push({ row: line, cells: all });
          text += all.map(quote).join(',') + eol;
          line += 1 + all.join('').split(/\r\n|\n/).length - 1;
        });
        const file = await files.write(`prop-${n++}.csv`, text);
        expect(await collect(file)).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});
