import { readFile, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refreshSummary, reportHasErrors } from '../../src/report/build-report.js';
import type { ResultReport } from '../../src/report/model.js';
import { neutraliseCell } from '../../src/report/neutralise.js';
import { reportPaths } from '../../src/report/report-paths.js';
import { writeErrorsTxt } from '../../src/report/write-errors-txt.js';
import { writeResultCsv } from '../../src/report/write-result-csv.js';
import { writeReports } from '../../src/report/write-reports.js';
import { ASSET_ITEM, reportOfInput, writeInput } from '../support/manifest-files.js';
import { reportSummary } from '../support/report-summary.js';
import { tempDirPerTest } from '../support/temp-files.js';

const addFormats = ((addFormatsImport as unknown as { default?: typeof addFormatsImport }).default ??
  addFormatsImport) as unknown as (a: Ajv2020) => void;
const reportSchema = JSON.parse(await readFile(new URL('../../schemas/report.schema.json', import.meta.url), 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
const validateReport = ajv.compile(reportSchema);

const startedAt = new Date('2026-03-01T10:00:00Z');
const finishedAt = new Date('2026-03-01T10:00:01Z');

const reportFor = (file: string) => reportOfInput(file, { command: 'check', finishedAt });

const MIXED = [
  'version: 1',
  'defaults: { deliveryAddress: { deliveryMethod: UPS Ground } }',
  'jobs:',
  '  - orderNumber: GOOD-1',
  '    dateDue: 2026-12-04',
  `    items: [${ASSET_ITEM}, { itemType: Stock, code: GD5000, variantCode: GD5000-BLK, sizeQuantities: { S: 1, M: 2 } }]`,
  '  - orderNumber: "=HYPERLINK(\\"http://evil\\")"',
  '    deliveryAddress: { countryCodeISO2: USA }',
  '    items:',
  '      - { itemType: Asset, code: "+A1", quantity: 0 }',
  '      - { itemType: Asset, code: A2, quantity: 2 }',
  '',
].join('\n');

describe('buildReport', () => {
  it('files diagnostics on items, jobs and the file, and derives statuses', async () => {
    const file = await writeInput('orders.yaml', MIXED);
    const { report } = await reportFor(file);
    expect(report).toMatchObject({
      reportVersion: 1,
      command: 'check',
      input: { file, format: 'yaml', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      startedAt: '2026-03-01T10:00:00.000Z',
      finishedAt: '2026-03-01T10:00:01.000Z',
      summary: { jobs: 2, items: 4, errors: 2, warnings: 0, byStatus: { valid: 1, invalid: 1, submitted: 0 } },
      errors: [],
    });
    const [good, bad] = report.jobs;
    expect(good).toMatchObject({
      index: 0,
      orderNumber: 'GOOD-1',
      status: 'valid',
      dateDue: '2026-12-04',
      jobNumber: null,
      source: { line: 4, column: 5 },
    });
    expect(good.items.map((i) => [i.itemType, i.code, i.quantity, i.status])).toEqual([
      ['Asset', 'A10001', 50, 'valid'],
      ['Stock', 'GD5000', 3, 'valid'],
    ]);
    expect(bad.status).toBe('invalid');
    // A job-level rule finding stays on the job; the item's schema fault on the item.
    expect(bad.errors).toMatchObject([
      { code: 'country-code.iso3', field: 'jobs[1].deliveryAddress.countryCodeISO2', source: { line: 8, column: 41 } },
    ]);
    expect(bad.items[0]).toMatchObject({
      status: 'invalid',
      source: { line: 10, column: 9 },
      errors: [{ code: 'schema.type', field: 'jobs[1].items[0].quantity', source: { line: 10, column: 51 } }],
    });
    expect(bad.items[1]).toMatchObject({ status: 'invalid', errors: [] });
    expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
  });

  it('puts file-level errors at the top and marks every job invalid', async () => {
    const file = await writeInput('orders.yaml', MIXED.replace('version: 1', 'version: 3'));
    const { report } = await reportFor(file);
    expect(report.errors).toMatchObject([{ code: 'schema.const', field: 'version', source: { line: 1, column: 10 } }]);
    expect(report.jobs.map((j) => j.status)).toEqual(['invalid', 'invalid']);
    expect(reportHasErrors(report)).toBe(true);
    expect(validateReport(report)).toBe(true);
  });

  it('reports an unparseable input with no jobs and the parse error', async () => {
    const file = await writeInput('orders.yaml', 'version: 1\njobs: [\n');
    const { report } = await reportFor(file);
    expect(report.jobs).toEqual([]);
    expect(report.errors[0].source).toMatchObject({ line: expect.any(Number), column: expect.any(Number) });
    expect(validateReport(report)).toBe(true);
  });

  it('recomputes the summary after the pipeline changes a job', async () => {
    const file = await writeInput('orders.yaml', MIXED);
    const { report } = await reportFor(file);
    report.jobs[0].status = 'submitted';
    report.jobs[0].jobNumber = 123456;
    refreshSummary(report);
    expect(report.summary.byStatus).toMatchObject({ valid: 0, submitted: 1, invalid: 1 });
    expect(validateReport(report)).toBe(true);
  });
});

describe('writeReports', () => {
  it('writes result.json, result.csv and errors.txt next to the input, and nothing else', async () => {
    const file = await writeInput('orders.yaml', MIXED);
    const { report, loaded } = await reportFor(file);
    const written = await writeReports(report, { manifest: loaded.manifest });
    const paths = reportPaths(file);
    expect(written).toEqual(paths);
    expect((await readdir(dirname(file))).sort()).toEqual([
      'orders.yaml',
      'orders.yaml.errors.txt',
      'orders.yaml.result.csv',
      'orders.yaml.result.json',
    ]);

    const json = JSON.parse(await readFile(paths.json, 'utf8'));
    expect(json).toEqual(report);
    expect(validateReport(json)).toBe(true);

    const iso3 =
      'jobs[1].deliveryAddress.countryCodeISO2: "USA" is a three-letter code; countryCodeISO2 takes exactly two letters. Write `country: USA` instead (it accepts a name, ISO2 or ISO3)';
    expect(await readFile(paths.errors, 'utf8')).toBe(
      `orders.yaml:8:41: ${iso3}\norders.yaml:10:51: jobs[1].items[0].quantity: must be an integer ≥ 1, got 0\n`,
    );

    const rows = parse(await readFile(paths.csv, 'utf8')) as string[][];
    expect(rows[0]).toEqual([
      'orderNumber',
      'itemIndex',
      'line',
      'itemType',
      'code',
      'quantity',
      'status',
      'jobNumber',
      'newAssetSku',
      'needsArtwork',
      'error',
    ]);
    expect(rows.slice(1)).toEqual([
      ['GOOD-1', '0', '6', 'Asset', 'A10001', '50', 'valid', '', '', '', ''],
      ['GOOD-1', '1', '6', 'Stock', 'GD5000', '3', 'valid', '', '', '', ''],
      // Formula-looking cells get a leading apostrophe; a plain number does not.
      [
        `'=HYPERLINK("http://evil")`,
        '0',
        '10',
        'Asset',
        "'+A1",
        '0',
        'invalid',
        '',
        '',
        '',
        `${iso3}; jobs[1].items[0].quantity: must be an integer ≥ 1, got 0`,
      ],
      [`'=HYPERLINK("http://evil")`, '1', '11', 'Asset', 'A2', '2', 'invalid', '', '', '', iso3],
    ]);
  });

  it('writes an empty JSON jobs list validly', async () => {
    const file = await writeInput('orders.yaml', '{');
    const { report, loaded } = await reportFor(file);
    await writeReports(report, { manifest: loaded.manifest });
    const json = JSON.parse(await readFile(reportPaths(file).json, 'utf8'));
    expect(json.jobs).toEqual([]);
    expect(validateReport(json)).toBe(true);
  });

  it('removes a stale errors.txt once the input is fixed', async () => {
    const file = await writeInput('orders.yaml', MIXED);
    let { report, loaded } = await reportFor(file);
    await writeReports(report, { manifest: loaded.manifest });
    expect((await readdir(dirname(file))).includes('orders.yaml.errors.txt')).toBe(true);

    await writeFile(
      file,
      MIXED.replace('quantity: 0', 'quantity: 1')
        .replace('countryCodeISO2: USA', 'country: USA')
        .replace(/orderNumber: "=.*"/, 'orderNumber: GOOD-2'),
    );
    ({ report, loaded } = await reportFor(file));
    expect(report.summary.errors).toBe(0);
    const written = await writeReports(report, { manifest: loaded.manifest });
    expect(written.errors).toBeUndefined();
    expect((await readdir(dirname(file))).sort()).toEqual([
      'orders.yaml',
      'orders.yaml.result.csv',
      'orders.yaml.result.json',
    ]);
  });

  it('for a CSV input, guards each line of a multi-line cell, which a verbatim copy would not', async () => {
    const csv = [
      'orderNumber,deliveryMethod,itemType,code,quantity,customerReference',
      'PO-1,UPSGND,Asset,A10001,50,"front',
      "=cmd|' /C calc'!A0\"",
      '',
    ].join('\r\n');
    const file = await writeInput('orders.csv', csv);
    const { report, loaded } = await reportFor(file);
    await writeReports(report, { manifest: loaded.manifest });
    const text = await readFile(reportPaths(file).csv, 'utf8');
    expect(text.split(/\r\n|\r|\n/).filter((line) => /^[=+\-@]/.test(line))).toEqual([]);
    const rows = parse(text, { relax_column_count: true }) as string[][];
    expect(rows[1]!.slice(0, 6)).toEqual(['PO-1', 'UPSGND', 'Asset', 'A10001', '50', "front\r\n'=cmd|' /C calc'!A0"]);
  });

  it('for a CSV input, copies the input columns verbatim, then the result columns', async () => {
    const csv = [
      'orderNumber,deliveryMethod,itemType,code,quantity,customerReference',
      'PO-1,UPSGND,Asset,A10001,50,',
      'PO-1,,Asset,A10002,abc,',
      'PO-2,UPSGND,PriceCode," DTF Full Color 10"" x 10""",10,=cmd()',
      '',
    ].join('\r\n');
    const file = await writeInput('orders.csv', csv);
    const { report, loaded } = await reportFor(file);
    await writeReports(report, { manifest: loaded.manifest });
    const rows = parse(await readFile(reportPaths(file).csv, 'utf8')) as string[][];
    expect(rows[0]).toEqual([
      'orderNumber',
      'deliveryMethod',
      'itemType',
      'code',
      'quantity',
      'customerReference',
      '_row',
      '_status',
      '_jobNumber',
      '_newAssetSku',
      '_needsArtwork',
      '_error',
    ]);
    expect(rows[1]).toEqual(['PO-1', 'UPSGND', 'Asset', 'A10001', '50', '', '2', 'invalid', '', '', '', '']);
    expect(rows[2].slice(0, 8)).toEqual(['PO-1', '', 'Asset', 'A10002', 'abc', '', '3', 'invalid']);
    expect(rows[2][11]).toMatch(/^quantity: /);
    // Verbatim: the leading space stays; the formula is neutralised.
    expect(rows[3].slice(0, 8)).toEqual([
      'PO-2',
      'UPSGND',
      'PriceCode',
      ' DTF Full Color 10" x 10"',
      '10',
      "'=cmd()",
      '4',
      'valid',
    ]);
    const errorsTxt = await readFile(reportPaths(file).errors, 'utf8');
    expect(errorsTxt).toMatch(/^orders\.csv:3: quantity: /);
  });

  it('streams a large result.csv', async () => {
    const dir = await tempDirPerTest();
    const items = 50_000;
    const report: ResultReport = {
      reportVersion: 1,
      command: 'check',
      htorderVersion: '0',
      input: { file: `${dir}/big.yaml`, sha256: null, format: 'yaml' },
      startedAt: startedAt.toISOString(),
      finishedAt: null,
      summary: reportSummary(),
      errors: [],
      warnings: [],
      jobs: Array.from({ length: items / 100 }, (_, j) => ({
        index: j,
        orderNumber: `PO-${j}`,
        status: 'valid' as const,
        source: { line: j + 1, column: 5 },
        jobNumber: null,
        dateDue: null,
        totalJobCost: null,
        estimatedCost: null,
        warnings: [],
        errors: [],
        items: Array.from({ length: 100 }, (_, k) => ({
          index: k,
          source: { line: j + k + 2, column: 9 },
          itemType: 'Asset',
          code: `A${k}`,
          quantity: 1,
          status: 'valid' as const,
          newAssetSku: null,
          needsArtworkToBeUploaded: null,
          errors: [],
        })),
      })),
    };
    const path = `${dir}/big.yaml.result.csv`;
    await writeResultCsv(path, report);
    const text = await readFile(path, 'utf8');
    expect(text.split('\n').length).toBe(items + 2);
    expect(text.split('\n')[items]).toBe('PO-499,99,600,Asset,A99,1,valid,,,,');
    expect(basename(path)).toBe('big.yaml.result.csv');
  });
});

describe('result.csv of a YAML input', () => {
  it('quotes every cell as csv-stringify does, neutralised, one line per item', async () => {
    const dir = await tempDirPerTest();
    const path = `${dir}/odd.yaml.result.csv`;
    const cell = fc.string({
      unit: fc.constantFrom('a', ',', '"', '\n', '\r', ' ', '=', '-', '+', '@', '1', 'é'),
      maxLength: 8,
    });
    await fc.assert(
      fc.asyncProperty(cell, cell, cell, cell, async (orderNumber, code, message, newAssetSku) => {
        const report: ResultReport = {
          reportVersion: 1,
          command: 'run',
          htorderVersion: '0',
          input: { file: `${dir}/odd.yaml`, sha256: null, format: 'yaml' },
          startedAt: startedAt.toISOString(),
          finishedAt: null,
          summary: reportSummary(),
          errors: [{ code: 'x', message, field: null, source: null }],
          warnings: [],
          jobs: [
            {
              index: 0,
              orderNumber,
              status: 'failed',
              source: { line: 3, column: 5 },
              jobNumber: 7,
              dateDue: null,
              totalJobCost: null,
              estimatedCost: null,
              warnings: [],
              errors: [{ code: 'y', message: code, field: 'jobs[0].x', source: null }],
              items: [
                {
                  index: 0,
                  source: { line: 6, column: 9 },
                  itemType: 'Asset',
                  code,
                  quantity: 2,
                  status: 'failed',
                  newAssetSku,
                  needsArtworkToBeUploaded: true,
                  errors: [],
                },
              ],
            },
          ],
        };
        await writeResultCsv(path, report);
        const text = await readFile(path, 'utf8');
        const rows = parse(text, { relax_column_count: false }) as string[][];
        expect(rows).toHaveLength(2);
        expect(rows[1].slice(0, 5)).toEqual([neutraliseCell(orderNumber), '0', '6', 'Asset', neutraliseCell(code)]);
        expect(rows[1][8]).toBe(neutraliseCell(newAssetSku));
        // The same bytes csv-stringify writes for these cells.
        expect(text).toBe(stringify(rows));
      }),
      { numRuns: 200 },
    );
  });
});

describe('writeErrorsTxt', () => {
  it('writes compiler-style lines, CSV with row and column, and nothing when all is well', async () => {
    const dir = await tempDirPerTest();
    const report = {
      input: { file: `${dir}/orders.csv` },
      errors: [
        { code: 'csv.header', message: 'unknown column "Qty"', field: null, source: { row: 1, columnName: 'Qty' } },
      ],
      jobs: [
        {
          errors: [
            {
              code: 'x',
              message: 'from the mapping',
              field: 'jobs[0].deliveryAddress.deliveryMethod',
              source: { line: 3, column: 7, file: 'erp.yaml' },
            },
          ],
          items: [
            {
              errors: [
                {
                  code: 'y',
                  message: 'bad',
                  field: 'jobs[0].items[0].quantity',
                  source: { row: 7, columnName: 'Menge' },
                },
              ],
            },
          ],
        },
      ],
    } as unknown as ResultReport;
    expect(await writeErrorsTxt(`${dir}/orders.csv.errors.txt`, report)).toBe(true);
    expect(await readFile(`${dir}/orders.csv.errors.txt`, 'utf8')).toBe(
      'orders.csv:1: Qty: unknown column "Qty"\nerp.yaml:3:7: jobs[0].deliveryAddress.deliveryMethod: from the mapping\norders.csv:7: Menge: bad\n',
    );
    expect(
      await writeErrorsTxt(`${dir}/orders.csv.errors.txt`, {
        input: report.input,
        errors: [],
        jobs: [],
      } as unknown as ResultReport),
    ).toBe(false);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('neutraliseCell', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+cmd', "'+cmd"],
    ['-2+3+cmd|x', "'-2+3+cmd|x"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['-5', '-5'],
    ['+1.5', '+1.5'],
    ['PO-1', 'PO-1'],
    ['', ''],
    // Each line of a multi-line cell, for an importer that splits rows on any line break.
    ['x\n=cmd|"/C calc"!A0', 'x\n\'=cmd|"/C calc"!A0'],
    ['x\r\n+1', "x\r\n'+1"],
    ['x\r@SUM(A1)', "x\r'@SUM(A1)"],
    ['=a\n-b', "'=a\n'-b"],
    ['12 Main St\nApt 4', '12 Main St\nApt 4'],
  ])('%j → %j', (cell, out) => {
    expect(neutraliseCell(cell)).toBe(out);
  });
});
