import { describe, expect, it } from 'vitest';
import { csvRows } from './csv-rows.js';
import { readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import { tempFiles } from '../../support/temp-files.js';

const files = tempFiles();

const HEADER = 'orderNumber,description,itemType,code,quantity';
const ROW = 'PO-1,Shirts,Asset,A1,10';

function errorsOf(r: { diagnostics: Array<{ severity: string; code: string; message: string; source?: unknown }> }) {
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  // The limit is the first problem reported; nothing else may come before it.
  expect(errors.length).toBeGreaterThan(0);
  return errors;
}

describe('CSV limits: hostile files stop with a located error', () => {
  it('a header of 20,000 columns stops at row 1 under a 1,000-column limit, naming the setting', async () => {
    const file = await files.write(
      'wide.csv',
      `${Array.from({ length: 20_000 }, (_, i) => `c${i}`).join(',')}\n${ROW}\n`,
    );
    const r = await readCsvDocument(file, { csv: { maxColumns: 1000 } });
    expect(r.doc).toBeUndefined();
    expect(r.sha256).toBe('');
    const [e] = errorsOf(r);
    expect(e.code).toBe('csv.limit');
    expect(e.source).toEqual({ file, row: 1 });
    expect(e.message).toContain('20000 columns');
    expect(e.message).toContain('csvMaxColumns');
  });

  it('a data row wider than the limit is located at its own row', async () => {
    const wide = `${ROW}${',x'.repeat(50)}`;
    const file = await files.write('wide-row.csv', `${HEADER}\n${ROW}\n\n${wide}\n${ROW}\n`);
    const r = await readCsvDocument(file, { csv: { maxColumns: 20 } });
    const [e] = errorsOf(r);
    expect(e).toMatchObject({ code: 'csv.limit', source: { file, row: 4 } });
    expect(e.message).toContain('55 columns');
  });

  it('one endless record (an unclosed quote) stops at the record-size limit, at the row it starts on', async () => {
    const file = await files.write('endless.csv', `${HEADER}\n${ROW}\nPO-2,"${'y'.repeat(300_000)}\n`);
    const r = await readCsvDocument(file, { csv: { maxRecordBytes: 64 * 1024 } });
    const [e] = errorsOf(r);
    expect(e).toMatchObject({ code: 'csv.limit', source: { file, row: 3 } });
    expect(e.message).toContain('65536-byte limit');
    expect(e.message).toContain('csvMaxRecordBytes');
  });

  it('a line of delimiters only (empty cells csv-parse does not count) stops at the record-size limit', async () => {
    const file = await files.write('commas.csv', `${HEADER}\n${','.repeat(400_000)}\n`);
    const r = await readCsvDocument(file, { csv: { maxRecordBytes: 100_000, maxColumns: 1_000_000 } });
    expect(errorsOf(r)[0]).toMatchObject({ code: 'csv.limit', source: { file, row: 2 } });
  });

  it('a short record over a small record limit is caught when it ends', async () => {
    const file = await files.write('long-cell.csv', `${HEADER}\n${ROW}\nPO-2,${'z'.repeat(500)},Asset,A1,1\n`);
    const r = await readCsvDocument(file, { csv: { maxRecordBytes: 200 } });
    expect(errorsOf(r)[0]).toMatchObject({ code: 'csv.limit', source: { file, row: 3 } });
  });

  it('counts a record in bytes, not characters: multi-byte text after ASCII chunks, across a chunk boundary', async () => {
    // Three chunks and a bit of ASCII rows, so the last record starts 10 bytes before a chunk ends.
    const chunk = 64 * 1024;
    let text = `${HEADER}\n`;
    while (text.length < 3 * chunk) text += `${ROW}\n`;
    while (text.length % chunk < chunk - 10 - ROW.length - 1) text += `${ROW}\n`;
    text += 'x'
      .repeat(chunk - 10 - (text.length % chunk))
      .replace(/^x{5}/, 'PO-1,')
      .replace(/x$/, '\n');
    const rows = text.split('\n').length;
    // 150 characters of 2 bytes: 300 bytes, over a 200-byte limit though only 150 characters long.
    const over = await files.write('bytes-over.csv', `${text}PO-2,${'é'.repeat(150)},Asset,A1,1\n`);
    const r = await readCsvDocument(over, { csv: { maxRecordBytes: 200 } });
    expect(r.diagnostics.filter((d) => d.code === 'csv.limit')).toMatchObject([{ source: { file: over, row: rows } }]);
    // 90 of them, 180 bytes, fit.
    const fits = await files.write('bytes-ok.csv', `${text}PO-2,${'é'.repeat(90)},Asset,A1,1\n`);
    expect(
      (await readCsvDocument(fits, { csv: { maxRecordBytes: 200 } })).diagnostics.map((d) => d.code),
    ).not.toContain('csv.limit');
  });

  it('a file over the size limit is refused before it is parsed (input.too-large, naming the setting)', async () => {
    const file = await files.write('big.csv', `${HEADER}\n${`${ROW}\n`.repeat(1000)}`);
    const r = await loadManifest(file, { csv: { maxFileBytes: 10_000 } });
    expect(r.manifest).toBeUndefined();
    const [e] = errorsOf(r);
    expect(e.code).toBe('input.too-large');
    expect(e.message).toContain('csvMaxFileBytes');
  });

  it('the defaults read an ordinary file untouched, and the row re-reader stops where the reader stopped', async () => {
    const ok = await files.write('ok.csv', `${HEADER}\n${`${ROW}\n`.repeat(50)}`);
    const r = await readCsvDocument(ok);
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(r.sha256).toMatch(/^[0-9a-f]{64}$/);
    const file = await files.write('rows.csv', `${HEADER}\n${ROW}\n${ROW}${',x'.repeat(30)}\n${ROW}\n`);
    const rows = (await csvRows(file, { csv: { maxColumns: 20 } })).rows.map((r) => r.row);
    expect(rows).toEqual([2]);
  });
});
