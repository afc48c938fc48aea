import { execFile } from 'node:child_process';
import { copyFile, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI, DIST, requireDist, ROOT } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * result.csv of a big CSV input is written by a worker thread while the main thread writes
 * result.json (write-result-csv.ts). A worker runs JavaScript, so these tests use the built
 * package in dist/ (under vitest the sources are TypeScript, and the write stays in the main
 * thread): every report must come out byte for byte as the main thread writes it, with the
 * same files and nothing else left in the folder. `worker: true` throws where the worker's
 * module is missing, so a test that passes with it did run the worker.
 */
requireDist();
type Modules = {
  load: typeof import('../../src/manifest/load-manifest.js');
  build: typeof import('../../src/report/build-report.js');
  write: typeof import('../../src/report/write-reports.js');
  paths: typeof import('../../src/report/report-paths.js');
  mapping: typeof import('../../src/manifest/mapping/load-mapping.js');
};
const dist = async (path: string) => import(join(DIST, path));
const built: Modules = {
  load: await dist('manifest/load-manifest.js'),
  build: await dist('report/build-report.js'),
  write: await dist('report/write-reports.js'),
  paths: await dist('report/report-paths.js'),
  mapping: await dist('manifest/mapping/load-mapping.js'),
};
const run = promisify(execFile);

const HEADER =
  'orderNumber,description,dateDue,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity,customerReference';

/**
 * `orders` orders of 3 rows; some rows broken on purpose (errors, formula cells, quoted line
 * breaks, a blank line). The plain descriptions are `descriptionBytes` longer when asked.
 */
function ordersCsv(orders: number, eol = '\n', descriptionBytes = 0): string {
  const lines = [HEADER];
  const long = descriptionBytes > 0 ? ` ${'x'.repeat(descriptionBytes - 1)}` : '';
  for (let o = 1; o <= orders; o++) {
    const description = o % 7 === 0 ? '"two\nlines, ""quoted"""' : o % 11 === 0 ? '=HYPERLINK(1)' : `Kit ${o}${long}`;
    lines.push(
      `SO-${o},${description},2026-12-01,UPS Ground,Contact ${o},${o} Main St,Austin,TX,78701,United States,Asset,A10001,${o % 13 === 0 ? 'x' : 5},`,
    );
    lines.push(`SO-${o},,,,,,,,,,"Asset",A10002,${o % 17 === 0 ? '-1' : 7},@ref`);
    lines.push(`SO-${o},,,,,,,,,,Asset,A10003,3${o % 19 === 0 ? ',,extra,cells' : o % 29 === 0 ? '' : ','}`);
    if (o % 23 === 0) lines.push(',,,');
  }
  return `${lines.join(eol)}${eol}`;
}

const startedAt = new Date('2026-11-23T04:00:00Z');

/** check's report of a loaded input, at a fixed time (so two writes of it compare byte for byte). */
function checkReport(loaded: Awaited<ReturnType<typeof built.load.loadManifest>>) {
  return built.build.buildReport({
    command: 'check',
    input: loaded.input,
    manifest: loaded.manifest,
    diagnostics: loaded.diagnostics,
    startedAt,
    finishedAt: startedAt,
  });
}

/** The reports of `input` written into `dir` (as `watch` does: to a target), the copy in a worker or not. */
async function reportsOf(
  input: string,
  dir: string,
  csvWorker: boolean,
  opts: { mapping?: string } = {},
): Promise<Record<string, Buffer>> {
  const mapping = opts.mapping ? await built.mapping.loadMapping(opts.mapping) : undefined;
  const loaded = await built.load.loadManifest(input, mapping ? { mapping } : {});
  const report = checkReport(loaded);
  await built.write.writeReports(report, {
    manifest: loaded.manifest,
    ...(mapping ? { mapping } : {}),
    // The same name shown in both folders, so result.json can be compared byte for byte.
    target: { paths: built.paths.reportPaths(join(dir, 'orders.csv')), inputShownAs: 'done/orders.csv' },
    worker: csvWorker,
  });
  const out: Record<string, Buffer> = {};
  for (const name of (await readdir(dir)).sort()) out[name] = await readFile(join(dir, name));
  return out;
}

async function sameBothWays(text: string | Buffer, opts: { mapping?: string } = {}): Promise<Record<string, Buffer>> {
  const input = join(await tempDirPerTest('htorder-worker-'), 'input.csv');
  await writeFile(input, text);
  const inThread = await reportsOf(input, await tempDirPerTest('htorder-worker-'), false, opts);
  const inWorker = await reportsOf(input, await tempDirPerTest('htorder-worker-'), true, opts);
  expect(Object.keys(inWorker)).toEqual(Object.keys(inThread));
  for (const name of Object.keys(inThread)) expect(inWorker[name].equals(inThread[name]), name).toBe(true);
  return inWorker;
}

describe('result.csv written by a worker thread', () => {
  it('writes the same three reports as the main thread, for an input with errors', async () => {
    const reports = await sameBothWays(ordersCsv(300));
    expect(Object.keys(reports)).toEqual(['orders.csv.errors.txt', 'orders.csv.result.csv', 'orders.csv.result.json']);
    const csv = reports['orders.csv.result.csv'].toString();
    expect(csv).toContain("'=HYPERLINK(1)"); // a formula cell written from its cells, neutralised
    expect(csv).toContain('"two\nlines, ""quoted"""'); // a quoted cell copied as it was
    expect(csv.split('\n')[1]).toMatch(/^SO-1,Kit 1,.*,2,valid,,,,$/);
    expect(reports['orders.csv.errors.txt'].toString()).toMatch(/^input\.csv:\d+: quantity: /m);
  });

  it('and for CRLF line ends, and mixed line ends', async () => {
    await sameBothWays(ordersCsv(100, '\r\n'));
    const text = ordersCsv(100);
    const mixed = `${text.slice(0, text.indexOf('\n'))}\r\n${text.slice(text.indexOf('\n') + 1)}`;
    const reports = await sameBothWays(mixed);
    expect(reports['orders.csv.result.csv'].toString().split('\n')[1]).toMatch(/^SO-1,Kit 1,/);
  });

  it('and for a mapped export (every row copied, skipped ones too)', async () => {
    const text = await readFile(join(ROOT, 'samples/shopify/orders_export.csv'));
    const reports = await sameBothWays(text, { mapping: 'shopify' });
    expect(reports['orders.csv.result.csv'].toString().split('\n').length).toBeGreaterThan(3);
  });

  it('fails the whole write when the worker fails, leaving no report and no temporary file', async () => {
    const input = join(await tempDirPerTest('htorder-worker-'), 'input.csv');
    await writeFile(input, ordersCsv(20));
    const dir = await tempDirPerTest('htorder-worker-');
    const loaded = await built.load.loadManifest(input, {});
    const report = checkReport(loaded);
    // The input is gone by the time the worker reads it again.
    await rm(input);
    const shownAs = join(dir, 'orders.csv');
    await expect(
      built.write.writeReports(report, {
        manifest: loaded.manifest,
        target: { paths: built.paths.reportPaths(shownAs), inputShownAs: shownAs },
        worker: true,
      }),
    ).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('is what `htorder check` does for a big input: the same reports as the main thread writes', async () => {
    // Over 4 MiB (WORKER_MIN_BYTES), so the CLI writes result.csv in a worker by default. Long
    // descriptions make the size with few rows: the work of the CLI, of the write in this thread
    // and of comparing their result.json grows with the rows, the worker's threshold with the
    // bytes only. 600 orders still hold every broken row ordersCsv makes, many times over.
    const text = ordersCsv(600, '\n', 10_000);
    expect(text.length).toBeGreaterThan(4 << 20);
    const dir = await tempDirPerTest('htorder-worker-');
    const input = join(dir, 'big.csv');
    await writeFile(input, text);
    await run(process.execPath, [CLI, 'check', input]).catch((err: { code?: number }) => {
      if (err.code !== 1) throw err; // 1: invalid, as this input is
    });
    const byCli = {
      csv: await readFile(`${input}.result.csv`),
      json: await readFile(`${input}.result.json`, 'utf8'),
      errors: await readFile(`${input}.errors.txt`),
    };
    const copy = join(await tempDirPerTest('htorder-worker-'), 'big.csv');
    await copyFile(input, copy);
    const inThread = await reportsOf(copy, await tempDirPerTest('htorder-worker-'), false);
    expect(byCli.csv.equals(inThread['orders.csv.result.csv'])).toBe(true);
    expect(byCli.errors.toString()).toBe(inThread['orders.csv.errors.txt'].toString());
    // result.json differs only in the times and where the input is.
    const comparable = (json: string) => {
      const r = JSON.parse(json);
      return { ...r, startedAt: undefined, finishedAt: undefined, input: { ...r.input, file: undefined } };
    };
    expect(comparable(byCli.json)).toEqual(comparable(inThread['orders.csv.result.json'].toString()));
    expect((await readdir(dir)).sort()).toEqual([
      'big.csv',
      'big.csv.errors.txt',
      'big.csv.result.csv',
      'big.csv.result.json',
    ]);
  });
});

describe('result.csv of a CSV input that changed after it was read', () => {
  it.each([
    ['replaced by another file', (text: string) => text.replaceAll('SO-', 'XX-'), false],
    ['edited in place, same size', (text: string) => text.replace('Kit 1,', 'Kit 9,'), false],
    ['replaced, written by a worker thread', (text: string) => text.replaceAll('SO-', 'XX-'), true],
  ] as const)('%s: lists the jobs read, never the rows of the file there now', async (_, change, csvWorker) => {
    const input = join(await tempDirPerTest('htorder-changed-'), 'input.csv');
    const text = ordersCsv(30);
    await writeFile(input, text);
    const loaded = await built.load.loadManifest(input);
    const report = checkReport(loaded);
    // The shop's next export is written over it while the run submits.
    await writeFile(`${input}.next`, change(text));
    await run('mv', [`${input}.next`, input]);
    const dir = await tempDirPerTest('htorder-changed-');
    await built.write.writeReports(report, {
      manifest: loaded.manifest,
      target: { paths: built.paths.reportPaths(join(dir, 'orders.csv')), inputShownAs: 'done/orders.csv' },
      worker: csvWorker,
    });
    const csv = (await readFile(join(dir, 'orders.csv.result.csv'), 'utf8')).split('\n');
    expect(csv[0]).toBe(
      'orderNumber,itemIndex,line,itemType,code,quantity,status,jobNumber,newAssetSku,needsArtwork,error',
    );
    expect(csv[1]).toBe('SO-1,0,2,Asset,A10001,5,valid,,,,');
    expect(csv.join('\n')).not.toContain('XX-');
    expect(csv.join('\n')).not.toContain('Kit 9');
    expect(await readdir(dir)).toEqual(['orders.csv.errors.txt', 'orders.csv.result.csv', 'orders.csv.result.json']);
  });
});
