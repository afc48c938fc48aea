import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { itemCount, itemsPending, type LineAnswer, refilePending } from '../../src/report/lazy-items.js';
import { JOB_STATUSES, type ResultReport } from '../../src/report/model.js';
import { reportPaths } from '../../src/report/report-paths.js';
import { csvCell, writeResultCsv } from '../../src/report/write-result-csv.js';
import { resultJsonChunks } from '../../src/report/write-result-json.js';
import { writeReports } from '../../src/report/write-reports.js';
import { ASSET_ITEM, reportOfInput, writeInput } from '../support/manifest-files.js';

const reportFor = (file: string) => reportOfInput(file, { command: 'check' });

const YAML = [
  'version: 1',
  'defaults: { deliveryAddress: { deliveryMethod: UPS Ground, country: US } }',
  'jobs:',
  '  - orderNumber: A-1',
  `    items: [${ASSET_ITEM}, { itemType: Stock, code: GD5000, variantCode: GD5000-BLK, sizeQuantities: { S: 1, M: 0 } }]`,
  '  - orderNumber: A-2',
  '    items:',
  '      - { itemType: Asset, code: A10001, quantity: 0 }',
  '      - { itemType: Asset, code: "=A2", quantity: 2 }',
  '  - orderNumber: A-3',
  `    items: [${ASSET_ITEM}]`,
  '',
].join('\n');

describe('item results built on first use', () => {
  it('look and behave like plain arrays: same keys in order, same values, mutations kept', async () => {
    const { report } = await reportFor(await writeInput('orders.yaml', YAML));
    const [a1, a2, a3] = report.jobs;
    // A-2 has an item error, so its items were built to file it; the others wait.
    expect([itemsPending(a1), itemsPending(a2), itemsPending(a3)]).toEqual([true, false, true]);
    expect(itemCount(a1)).toBe(2);
    expect(report.summary).toMatchObject({ items: 5, errors: 1 });
    expect(Object.keys(a1)).toEqual([
      'index',
      'orderNumber',
      'status',
      'source',
      'jobNumber',
      'dateDue',
      'totalJobCost',
      'estimatedCost',
      'warnings',
      'errors',
      'items',
    ]);
    expect(a1.items).toEqual([
      {
        index: 0,
        source: { line: 5, column: 13 },
        itemType: 'Asset',
        code: 'A10001',
        quantity: 50,
        status: 'valid',
        newAssetSku: null,
        needsArtworkToBeUploaded: null,
        errors: [],
      },
      {
        index: 1,
        source: { line: 5, column: 62 },
        itemType: 'Stock',
        code: 'GD5000',
        quantity: 1,
        status: 'valid',
        newAssetSku: null,
        needsArtworkToBeUploaded: null,
        errors: [],
      },
    ]);
    expect(itemsPending(a1)).toBe(false);
    a1.items[0].newAssetSku = 'A99';
    expect(a1.items[0].newAssetSku).toBe('A99');
    expect(a2.items.map((i) => i.status)).toEqual(['invalid', 'invalid']);
    // Pending items keep the status their job had when the report was built, as eager ones did.
    a3.status = 'not-submitted';
    expect(a3.items[0].status).toBe('valid');
    const assigned = report.jobs[2];
    assigned.items = [];
    expect(assigned.items).toEqual([]);
  });

  it('are written without being kept, and result.json is exactly JSON.stringify of the report', async () => {
    const file = await writeInput('orders.yaml', YAML);
    const { report, loaded } = await reportFor(file);
    report.jobs[2].items[0].needsArtworkToBeUploaded = true; // one built job among pending ones
    await writeReports(report, { manifest: loaded.manifest });
    expect(itemsPending(report.jobs[0])).toBe(true);
    const text = await readFile(reportPaths(file).json, 'utf8');
    expect(text).toBe(`${JSON.stringify(report, null, 2)}\n`); // reads every getter: builds all
    expect(itemsPending(report.jobs[0])).toBe(false);
    const csv = parse(await readFile(reportPaths(file).csv, 'utf8')) as string[][];
    expect(csv.map((r) => r[4])).toEqual(['code', 'A10001', 'GD5000', 'A10001', "'=A2", 'A10001']);
  });
});

/** A CSV with the default template's job columns and cells drawn from awkward pieces. */
const awkwardCsv = fc
  .record({
    eol: fc.constantFrom('\n', '\r\n'),
    bom: fc.boolean(),
    finalEol: fc.boolean(),
    rows: fc.array(
      fc.record({
        order: fc.constantFrom('PO-1', 'PO-2', 'PO-3', '=PO', ' PO-4 ', ''),
        cells: fc.array(
          fc.array(
            fc.constantFrom('a', ' ', '=', '+', '-', '@', '\t', '"', ',', '\n', '\r\n', '5', '-5', 'é', 'A10001'),
            { maxLength: 3 },
          ),
          { minLength: 0, maxLength: 5 },
        ),
        quote: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        blankAfter: fc.boolean(),
      }),
      { minLength: 1, maxLength: 8 },
    ),
  })
  .map(({ eol, bom, finalEol, rows }) => {
    const lines = ['orderNumber,itemType,code,quantity,customerReference,description'];
    for (const r of rows) {
      const cells = r.cells.map((pieces, c) => {
        const text = pieces.join('');
        // Unquoted cells cannot hold separators or line breaks; quoted ones can hold anything.
        return r.quote[c] || /[,\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
      });
      lines.push([r.order, 'Asset', ...cells].join(','));
      if (r.blankAfter) lines.push(',,');
    }
    return `${bom ? '\ufeff' : ''}${lines.join(eol)}${finalEol ? eol : ''}`;
  });

describe('result.csv of a default-template CSV', () => {
  it('copying records verbatim gives the same cells as writing them from their cells', async () => {
    await fc.assert(
      fc.asyncProperty(awkwardCsv, async (text) => {
        const file = await writeInput('orders.csv', text);
        const { report, loaded } = await reportFor(file);
        await writeResultCsv(`${file}.fast.csv`, report, { manifest: loaded.manifest });
        await writeResultCsv(`${file}.slow.csv`, report, { manifest: loaded.manifest, copyVerbatim: false });
        const fast = parse(await readFile(`${file}.fast.csv`, 'utf8'), { relax_column_count: true });
        const slow = parse(await readFile(`${file}.slow.csv`, 'utf8'), { relax_column_count: true });
        expect(fast).toEqual(slow);
      }),
      { numRuns: 60 },
    );
  });

  it('copies plain records byte for byte and writes from their cells only the ones it must', async () => {
    const text =
      'orderNumber,itemType,code,quantity,customerReference\r\n"PO-1","Asset",A10001,5\r\nPO-1,Asset,A10001,5,=1+1\r\n';
    const file = await writeInput('orders.csv', text);
    const { report, loaded } = await reportFor(file);
    await writeResultCsv(`${file}.result.csv`, report, { manifest: loaded.manifest });
    const lines = (await readFile(`${file}.result.csv`, 'utf8')).split('\n');
    expect(lines[0]).toBe(
      'orderNumber,itemType,code,quantity,customerReference,_row,_status,_jobNumber,_newAssetSku,_needsArtwork,_error',
    );
    // Quotes kept (verbatim), the short row padded; the formula row written from its cells, neutralised.
    expect(lines[1]).toMatch(/^"PO-1","Asset",A10001,5,,2,invalid,,,,"jobs\[0\]/);
    expect(lines[2]).toMatch(/^PO-1,Asset,A10001,5,'=1\+1,3,invalid,,,,"jobs\[0\]/);
    expect(lines).toHaveLength(4);
  });

  it('reads a file whose lines end in a lone CR (old Mac exports) as the reader does', async () => {
    const text = 'orderNumber,itemType,code,quantity\rPO-1,Asset,A10001,5\rPO-2,Asset,A10001,6\r';
    const file = await writeInput('orders.csv', text);
    const { report, loaded } = await reportFor(file);
    expect(report.jobs).toHaveLength(2);
    await writeResultCsv(`${file}.result.csv`, report, { manifest: loaded.manifest });
    const rows = parse(await readFile(`${file}.result.csv`, 'utf8')) as string[][];
    expect(rows.map((r) => r.slice(0, 6))).toEqual([
      ['orderNumber', 'itemType', 'code', 'quantity', '_row', '_status'],
      ['PO-1', 'Asset', 'A10001', '5', '2', 'invalid'],
      ['PO-2', 'Asset', 'A10001', '6', '3', 'invalid'],
    ]);
  });
});

describe('csvCell', () => {
  it('quotes exactly as csv-stringify does', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', ' ', '=', 'é') }), (s) => {
        expect(`${csvCell(s)}\n`).toBe(stringify([[s]]));
      }),
    );
  });
});

describe('buildReport on a big manifest', () => {
  it('keeps no item results for jobs nobody looked at', async () => {
    const rows = ['orderNumber,itemType,code,quantity'];
    for (let i = 0; i < 3000; i++) rows.push(`PO-${i >> 2},Asset,A10001,${1 + (i % 9)}`);
    const file = await writeInput('big.csv', `${rows.join('\n')}\n`);
    const { report, loaded } = await reportFor(file);
    await writeReports(report as ResultReport, { manifest: loaded.manifest });
    expect(report.jobs.every(itemsPending)).toBe(true);
    expect(report.summary.items).toBe(3000);
    const json = JSON.parse(await readFile(reportPaths(file).json, 'utf8'));
    expect(json.jobs[749].items[3]).toEqual({
      index: 3,
      source: { row: 3001 },
      itemType: 'Asset',
      code: 'A10001',
      quantity: 3,
      status: 'invalid',
      newAssetSku: null,
      needsArtworkToBeUploaded: null,
      errors: [],
    });
  });

  it('filed under an outcome while pending, write exactly what the same items built and written on would', async () => {
    const file = await writeInput('orders.yaml', YAML);
    const line = fc.record({
      newAssetSku: fc.constantFrom(null, null, null, 'SKU-9'),
      needsArtworkToBeUploaded: fc.constantFrom(false, false, true),
    });
    const lines = fc.option(fc.array(line, { maxLength: 3 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...JOB_STATUSES), lines, async (status, answers) => {
        const pending = (await reportFor(file)).report;
        const built = await reportFor(file);
        const job = pending.jobs[0];
        const filed = refilePending(job, status, answers);
        // The plain path (the pipeline's job report): every item built, each given its line's answer.
        built.report.jobs[0].items.forEach((item, k) => {
          const answer: LineAnswer | undefined = answers?.[k];
          if (answer) {
            item.newAssetSku = answer.newAssetSku;
            item.needsArtworkToBeUploaded = answer.needsArtworkToBeUploaded;
          }
          item.status = status;
        });
        // Only the job's own items take an answer: a line beyond them changes nothing.
        const own = (answers ?? []).slice(0, itemCount(job));
        const uniform = own.every((a) => a.newAssetSku === null && !a.needsArtworkToBeUploaded);
        const whole = answers === undefined || answers.length === 0 || answers.length >= itemCount(job);
        expect(filed).toBe(uniform && whole);
        expect(itemsPending(job)).toBe(true);
        if (!filed) return;
        const json = (r: ResultReport) => [...resultJsonChunks(r)].join('');
        expect(json(pending)).toBe(json(built.report));
        const at = (name: string) => `${file}.${name}.result.csv`;
        await writeResultCsv(at('pending'), pending, { manifest: built.loaded.manifest });
        await writeResultCsv(at('built'), built.report, { manifest: built.loaded.manifest });
        expect(await readFile(at('pending'), 'utf8')).toBe(await readFile(at('built'), 'utf8'));
      }),
      { numRuns: 60 },
    );
  });
});
