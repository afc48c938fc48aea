import { readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadManifest } from '../../src/manifest/load-manifest.js';
import type { Manifest } from '../../src/manifest/model.js';
import { JobReporter } from '../../src/pipeline/job-report.js';
import type { JobState } from '../../src/pipeline/job-state.js';
import { checkedReport } from '../../src/report/build-report.js';
import { FinalResultCsv } from '../../src/report/final-result-csv.js';
import { reportPaths } from '../../src/report/report-paths.js';
import { SpooledReport } from '../../src/report/spooled-report.js';
import { writeReports } from '../../src/report/write-reports.js';
import { writeResultCsv } from '../../src/report/write-result-csv.js';
import { jobEnds } from '../support/job-ends.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { seeded } from '../support/seeded-random.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * result.csv written along with the jobs (FinalResultCsv) against the one written at the end
 * (writeResultCsv of the same spooled report): byte for byte, over inputs whose orders' rows
 * interleave, with blank lines, quoted cells, cells a spreadsheet would run as formulas and rows
 * check refuses, jobs ending in any order around when it begins; and removed, never taken, when
 * what it was made of changed.
 */

interface Layout {
  /** Per row: the job it is an item of (numbered by first appearance), or -1 for a blank line. */
  rows: number[];
  quirks: number[];
}

/** The CSV text of `layout`, and how many items each job has. */
function csvOf({ rows, quirks }: Layout): { text: string; items: number[] } {
  const lines = ['orderNumber,deliveryMethod,itemType,code,quantity'];
  const items: number[] = [];
  for (const [r, j] of rows.entries()) {
    if (j < 0) {
      lines.push('');
      continue;
    }
    items[j] = (items[j] ?? 0) + 1;
    const quirk = quirks[r % quirks.length];
    const order = quirk === 1 ? `"PO-${j}"` : `PO-${j}`;
    const code = quirk === 2 ? '"A1,00""0"' : quirk === 3 ? '=A1+1' : `A100${items[j]}`;
    const quantity = quirk === 4 ? 'abc' : String(10 + j);
    lines.push(`${order},UPSGND,Asset,${code},${quantity}`);
  }
  return { text: `${lines.join('\r\n')}\r\n`, items };
}

/** Rows of `jobs` orders of 1–3 items each, shuffled so that some orders' rows interleave, jobs renumbered by first row. */
const layouts = fc
  .record({
    sizes: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 40 }),
    swaps: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 20 }),
    blanks: fc.array(fc.nat(), { maxLength: 4 }),
    quirks: fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 1, maxLength: 12 }),
  })
  .map(({ sizes, swaps, blanks, quirks }): Layout => {
    const rows = sizes.flatMap((n, j) => new Array<number>(n).fill(j));
    for (const [a, b] of swaps) {
      const [x, y] = [a % rows.length, b % rows.length];
      [rows[x], rows[y]] = [rows[y], rows[x]];
    }
    for (const at of blanks) rows.splice(at % (rows.length + 1), 0, -1);
    const renumber = new Map<number, number>();
    for (const j of rows) if (j >= 0 && !renumber.has(j)) renumber.set(j, renumber.size);
    return { rows: rows.map((j) => (j < 0 ? -1 : (renumber.get(j) as number))), quirks };
  });

/** A spooled report of `text` read as `name` in a folder of its own, its jobs not ended. */
async function begun(text: string) {
  const dir = await tempDirPerTest('htorder-final-csv-');
  const input = join(dir, 'orders.csv');
  await writeFile(input, text);
  const read = await loadManifest(input);
  const manifest = read.manifest as Manifest;
  const checked = checkedReport({
    command: 'run',
    input: read.input,
    manifest,
    diagnostics: read.diagnostics,
    startedAt: new Date('2026-03-01T10:00:00Z'),
  });
  const reporter = new JobReporter(checked, manifest);
  const spooled = await SpooledReport.create(checked.head, checked.jobCount, reporter.pending, reportPaths(input));
  reporter.spoolTo(spooled.spool);
  return { dir, input, manifest, reporter, spooled };
}

/** Each job's states (jobEnds) and the order the jobs end in: shuffled within a window of 12. */
function plays(manifest: Manifest, seed: number) {
  const next = seeded(seed);
  const items = manifest.jobs.map((job) => job.items.length);
  const { statesOf } = jobEnds((j) => Math.max(1, items[j] ?? 1));
  const states = manifest.jobs.map((_, j) => statesOf(j, next));
  const order = states.map((_, j) => j).sort((a, b) => a + next() * 12 - (b + next() * 12));
  return { states, order, next };
}

/** Plays the jobs to their ends, beginning result.csv along with them after `startAfter` ends. */
async function run(text: string, seed: number, startAfter: number) {
  const b = await begun(text);
  const { reporter, spooled, manifest } = b;
  const { states, order } = plays(manifest, seed);
  for (const j of order) if (states[j].length === 2) reporter.write(states[j][0]);
  let final: FinalResultCsv | undefined;
  for (const [n, j] of order.entries()) {
    if (n === startAfter) {
      final = await FinalResultCsv.start(spooled, { manifest });
      // Its first chunk read, it waits for the next job still running.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    reporter.end(states[j][states[j].length - 1] as JobState);
    if (n % 3 === 0) await new Promise(setImmediate);
  }
  final ??= await FinalResultCsv.start(spooled, { manifest });
  return { ...b, final: final as FinalResultCsv };
}

/** The temporaries of result.csv in `dir` (the spool's own stay until it closes). */
async function csvTemporaries(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith('.orders.csv.result.csv.'));
}

/** result.csv written now from the spooled report: what the end of a run wrote before. */
async function plain(b: Awaited<ReturnType<typeof begun>>): Promise<string> {
  const path = join(b.dir, 'plain.result.csv');
  await writeResultCsv(path, b.spooled.report, { manifest: b.manifest, jobsNow: b.spooled.jobsNow() });
  return readFile(path, 'utf8');
}

describe('result.csv written along with the jobs', () => {
  it('is the file written at the end, byte for byte, however the rows and the ends fall', async () => {
    await fc.assert(
      fc.asyncProperty(layouts, fc.nat(), fc.nat(), async (layout, seed, start) => {
        const { text } = csvOf(layout);
        const b = await run(text, seed, start % (layout.rows.length + 1));
        expect(b.final).toBeDefined();
        const to = join(b.dir, 'final.result.csv');
        expect(await b.final.moveTo(to)).toBe(true);
        expect(await readFile(to, 'utf8')).toBe(await plain(b));
        await b.spooled.close();
        expect((await readdir(b.dir)).sort()).toEqual(['final.result.csv', 'orders.csv', 'plain.result.csv']);
      }),
      { numRuns: 60 },
    );
  });

  it('an input of many chunks is followed a piece at a time, and comes out the same', async () => {
    const rows = Array.from({ length: 15000 }, (_, r) => Math.floor(r / 3));
    const { text } = csvOf({ rows, quirks: [0, 0, 1, 0, 2, 0, 0, 3, 0] });
    expect(text.length).toBeGreaterThan(4 * 64 * 1024);
    const b = await run(text, 7, 100);
    const to = join(b.dir, 'final.result.csv');
    expect(await b.final.moveTo(to)).toBe(true);
    expect(await readFile(to, 'utf8')).toBe(await plain(b));
    await b.spooled.close();
  });

  it('waits for a job that has not ended, and goes on when it ends', async () => {
    const { text } = csvOf({ rows: [0, 0, 1, 2, 2], quirks: [0] });
    const b = await begun(text);
    const { states } = plays(b.manifest, 3);
    const final = (await FinalResultCsv.start(b.spooled, { manifest: b.manifest })) as FinalResultCsv;
    for (const j of [1, 2]) b.reporter.end(states[j][states[j].length - 1]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Job 0's rows come first: nothing of the file is written while it runs.
    expect(await readFile(final.path, 'utf8')).toBe('');
    b.reporter.end(states[0][states[0].length - 1]);
    const to = join(b.dir, 'final.result.csv');
    expect(await final.moveTo(to)).toBe(true);
    expect(await readFile(to, 'utf8')).toBe(await plain(b));
    await b.spooled.close();
  });

  it('is not taken, and is removed, when the input was touched, a file-level error came, or a job never ended', async () => {
    const { text } = csvOf({ rows: [0, 1, 1, 2], quirks: [0] });
    const cases: Array<[string, (b: Awaited<ReturnType<typeof run>>) => Promise<void>]> = [
      ['the input touched', (b) => utimes(b.input, new Date(), new Date('2020-01-01T00:00:00Z'))],
      [
        'a file-level error',
        async (b) => {
          b.spooled.report.errors.push({ code: 'x.test', message: 'late', field: null, source: { row: 3 } });
        },
      ],
    ];
    for (const [what, change] of cases) {
      const b = await run(text, 5, 1);
      await change(b);
      expect(await b.final.moveTo(join(b.dir, 'final.result.csv')), what).toBe(false);
      expect(await csvTemporaries(b.dir), what).toEqual([]);
      await b.spooled.close();
    }
    // A job still running at the end: the writer stops rather than waits for it.
    const b = await begun(text);
    const final = (await FinalResultCsv.start(b.spooled, { manifest: b.manifest })) as FinalResultCsv;
    expect(await final.moveTo(join(b.dir, 'final.result.csv'))).toBe(false);
    expect(await csvTemporaries(b.dir)).toEqual([]);
    await b.spooled.close();
  });

  it('stops when the spool closes, leaving nothing beside the input', async () => {
    const { text } = csvOf({ rows: [0, 1, 2], quirks: [0] });
    const b = await begun(text);
    const final = (await FinalResultCsv.start(b.spooled, { manifest: b.manifest })) as FinalResultCsv;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await b.spooled.close();
    await final.abandon();
    expect(await readdir(b.dir)).toEqual(['orders.csv']);
  });

  it('becomes the written result.csv beside the input, and the end writes it anew when it cannot stand', async () => {
    const { text } = csvOf({ rows: [0, 1, 1, 2, 3], quirks: [0, 3] });
    for (const touch of [false, true]) {
      const b = await run(text, 9, 2);
      if (touch) await utimes(b.input, new Date(), new Date('2020-01-01T00:00:00Z'));
      const want = await plain(b);
      b.spooled.refreshSummary();
      const written = await writeReports(b.spooled.report, {
        manifest: b.manifest,
        spooled: b.spooled,
        finalCsv: b.final,
      });
      expect(await readFile(written.csv, 'utf8'), `touched: ${touch}`).toBe(want);
      await b.spooled.close();
      expect((await readdir(b.dir)).filter((n) => n.startsWith('.'))).toEqual([]);
    }
  });
});

describe('a run of a CSV input', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await PipelineHarness.start();
  });
  afterAll(async () => h.close());
  beforeEach(async () => h.reset());

  it('takes result.csv written along with its jobs for its report', async () => {
    const header =
      'orderNumber,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity';
    const address = 'Ana Ruiz,1 Main St,Austin,TX,78701,US';
    const rows: string[] = [];
    for (let j = 0; j < 40; j++) {
      rows.push(`PO-F${j},UPS Ground,${address},Asset,A10001,${10 + j}`);
      // Every fifth order's second line comes after the next order's first.
      if (j % 5 === 0 && j > 0) rows.push(`PO-F${j - 1},,,,,,,,Asset,A10001,12`);
    }
    const file = await h.write('orders.csv', `${header}\n${rows.join('\n')}\n`);
    const moves = vi.spyOn(FinalResultCsv.prototype, 'moveTo');
    try {
      const { code, stderr } = await h.cli('run', [file], { env: { HTORDER_CONCURRENCY: '2' } });
      expect(code, stderr).toBe(0);
      expect(moves).toHaveBeenCalledTimes(1);
      expect(await moves.mock.results[0]?.value).toBe(true);
    } finally {
      moves.mockRestore();
    }
    const csv = (await readFile(`${file}.result.csv`, 'utf8')).trimEnd().split('\n');
    expect(csv).toHaveLength(rows.length + 1);
    expect(csv[0]).toBe(`${header},_row,_status,_jobNumber,_newAssetSku,_needsArtwork,_error`);
    const statuses = csv.slice(1).map((line) => line.split(',')[12]);
    expect(statuses.filter((s) => s === 'submitted')).toHaveLength(rows.length);
    expect((await readdir(h.workDir)).sort()).toEqual([
      'orders.csv',
      'orders.csv.result.csv',
      'orders.csv.result.json',
    ]);
  }, 60_000);
});
