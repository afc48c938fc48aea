import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportPaths } from '../../src/report/report-paths.js';
import { ReportWriter } from '../../src/report/report-writer.js';
import { writeReports } from '../../src/report/write-reports.js';
import { reportOfInput, writeInput } from '../support/manifest-files.js';
import { tempDirPerTest } from '../support/temp-files.js';

/** A CSV input with one bad row: every report is written (errors.txt too), result.csv from the input's own cells. */
const CSV = [
  'orderNumber,deliveryMethod,itemType,code,quantity',
  'PO-1,UPSGND,Asset,A10001,50',
  'PO-1,,Asset,A10002,abc',
  '',
].join('\r\n');

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('writeReports to a target (watch: once, where the input ends up)', () => {
  it('writes the three files only there, with their mode, naming the final location and reading the input', async () => {
    const input = await writeInput('orders.csv', CSV);
    const { report, manifest } = await reportOfInput(input);
    const done = await tempDirPerTest();
    const final = join(done, 'orders.20261121T060328123Z.csv');
    const paths = reportPaths(final);
    const written = await writeReports(report, {
      manifest,
      target: { paths, inputShownAs: final, file: { mode: 0o640 } },
    });
    expect(written).toEqual(paths);
    // Nothing beside the file the input was read from.
    expect(await readdir(dirname(input))).toEqual(['orders.csv']);
    expect((await readdir(done)).sort()).toEqual([
      'orders.20261121T060328123Z.csv.errors.txt',
      'orders.20261121T060328123Z.csv.result.csv',
      'orders.20261121T060328123Z.csv.result.json',
    ]);
    expect(JSON.parse(await readFile(paths.json, 'utf8')).input.file).toBe(final);
    // errors.txt names the input as it was dropped; result.csv carries its own cells.
    expect(await readFile(paths.errors, 'utf8')).toMatch(/^orders\.csv:3: quantity: /);
    expect((await readFile(paths.csv, 'utf8')).split('\n')[1]).toMatch(/^PO-1,UPSGND,Asset,A10001,50,/);
    for (const p of Object.values(paths)) expect((await stat(p)).mode & 0o777).toBe(0o640);
  });
});

describe('ReportWriter', () => {
  it('holds the first write for a pause after the first outcome, so a quick input is written once, at flush', async () => {
    const input = await writeInput('orders.csv', CSV);
    const { report, manifest } = await reportOfInput(input);
    const writer = new ReportWriter(report, { manifest, intervalMs: 60_000 });
    writer.schedule();
    writer.schedule();
    // Long enough for a write started at once to have landed (it takes a few milliseconds).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await exists(reportPaths(input).json)).toBe(false);
    await writer.flush();
    expect(await exists(reportPaths(input).json)).toBe(true);
  });

  it('holds the first write for PAUSE_PER_WRITE times what reading the input took, when that is longer', async () => {
    const input = await writeInput('orders.csv', CSV);
    const { report, manifest } = await reportOfInput(input);
    const slow = await writeInput('slow.csv', CSV);
    const { report: slowReport, manifest: slowManifest } = await reportOfInput(slow);
    // Read at once: a first write follows its first outcome straight away.
    const quick = new ReportWriter(report, { manifest, intervalMs: 0, readTook: 0 });
    // Read in a second: its first write waits half a minute, as one of a big input would.
    const big = new ReportWriter(slowReport, { manifest: slowManifest, intervalMs: 0, readTook: 1_000 });
    quick.schedule();
    big.schedule();
    // However slow the machine, the quick one's write lands well within the other's pause.
    await expect.poll(() => exists(reportPaths(input).json), { timeout: 20_000, interval: 20 }).toBe(true);
    expect(await exists(reportPaths(slow).json)).toBe(false);
    await Promise.all([quick.flush(), big.flush()]);
    expect(await exists(reportPaths(slow).json)).toBe(true);
  });

  it('without progress, writes nothing until flushed, then only to the target', async () => {
    const input = await writeInput('orders.csv', CSV);
    const { report, manifest } = await reportOfInput(input);
    const writer = new ReportWriter(report, { manifest, intervalMs: 0, progress: false });
    writer.schedule();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await readdir(dirname(input))).toEqual(['orders.csv']);
    const done = await tempDirPerTest();
    const paths = reportPaths(join(done, 'orders.csv'));
    await writer.flush({ paths, inputShownAs: join(done, 'orders.csv') });
    expect(await readdir(dirname(input))).toEqual(['orders.csv']);
    expect(await exists(paths.json)).toBe(true);
  });
});
