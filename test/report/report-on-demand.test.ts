import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { formatInputOutcome } from '../../src/cli/format-outcome.js';
import type { Diagnostic, Manifest } from '../../src/manifest/model.js';
import { JobReporter, jobReporter } from '../../src/pipeline/job-report.js';
import type { JobState, KeptResolution, StageOutcome } from '../../src/pipeline/job-state.js';
import { buildReport, checkedReport, refreshSummary } from '../../src/report/build-report.js';
import type { ResultReport } from '../../src/report/model.js';
import { reportPaths } from '../../src/report/report-paths.js';
import { SpooledReport } from '../../src/report/spooled-report.js';
import { firstErrors, heldReasons } from '../../src/report/write-errors-txt.js';
import { writeReports } from '../../src/report/write-reports.js';
import { writeResultCsv } from '../../src/report/write-result-csv.js';
import type { LedgerEntry } from '../../src/storage/ledger/model.js';
import { loadManifest } from '../../src/manifest/load-manifest.js';
import { seeded } from '../support/seeded-random.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * A run's report rendered on demand (JobReporter + SpooledReport: ended jobs on disk, running
 * ones rendered from their states) against the report as the pipeline held it whole (buildReport
 * + jobReporter): the same bytes in all three reports, at every write, over mixed outcomes.
 */

const JOBS = 150;
const itemsOf = (j: number): number => 1 + (j % 3);

/** A CSV input whose check finds something now and then: a bad quantity (item error), a missing method (job error). */
function csvInput(): string {
  const rows = ['orderNumber,deliveryMethod,itemType,code,quantity'];
  for (let j = 0; j < JOBS; j++)
    for (let k = 0; k < itemsOf(j); k++) {
      const method = k > 0 ? '' : j % 37 === 5 ? '' : 'UPSGND';
      const quantity = j % 41 === 7 && k === 0 ? 'abc' : String(10 + j);
      rows.push(`PO-${j},${method},Asset,A1000${k},${quantity}`);
    }
  return `${rows.join('\r\n')}\r\n`;
}

function yamlInput(): string {
  const lines = ['version: 1', 'defaults: { deliveryAddress: { deliveryMethod: UPS Ground, country: US } }', 'jobs:'];
  for (let j = 0; j < JOBS; j++) {
    lines.push(`  - orderNumber: PO-${j}`, '    items:');
    for (let k = 0; k < itemsOf(j); k++)
      lines.push(`      - { itemType: Asset, code: A1000${k}, quantity: ${j % 41 === 7 ? '"x"' : 10 + j} }`);
  }
  return `${lines.join('\n')}\n`;
}

/** Where each job ends: refused, held back, awaiting approval, created, found, not created, not processed, in doubt. */
const ENDS: Exclude<StageOutcome, 'ready'>[] = [
  'refused',
  'held-back',
  'awaiting-approval',
  'created',
  'found',
  'not-created',
  'not-processed',
  'unknown',
];

/** The state after PLAN (ready, or an end) and, for a ready one, after its submit; diagnostics only grow. */
function statesOf(j: number, next: () => number): JobState[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const base = { index: j, orderNumber: `PO-${j}`, hash: 'h', unavailable: false };
  // Resolved (an estimate, a due date) or not: refused jobs often were not.
  const resolved: KeptResolution | undefined =
    next() < 0.7
      ? {
          kept: true,
          orderNumber: `PO-${j}`,
          jobIndex: j,
          request: 'r',
          content: 'c',
          estimate: { total: 10 + j / 4, currency: 'USD' },
          dateDue: next() < 0.5 ? '2026-03-12' : null,
        }
      : undefined;
  const planned: Diagnostic[] = [];
  if (next() < 0.3) planned.push({ severity: 'warning', code: 'w.test', message: `note ${j}`, field: `jobs[${j}]` });
  const ready = next() < 0.6;
  const end = pick(ENDS);
  if (!ready || end === 'refused') {
    // Ends unsent after PLAN: its only write.
    const outcome: Exclude<StageOutcome, 'ready'> = ready ? 'held-back' : (end as Exclude<StageOutcome, 'ready'>);
    const diagnostics = [...planned, ...findingsOf(j, outcome, next)];
    return [{ ...base, ...(resolved ? { resolved } : {}), outcome, diagnostics, ...ledgerOf(j, outcome, next) }];
  }
  const after = [...planned, ...findingsOf(j, end, next)];
  const sure = resolved ?? {
    kept: true as const,
    orderNumber: `PO-${j}`,
    jobIndex: j,
    request: 'r',
    content: 'c',
    estimate: {},
  };
  return [
    { ...base, resolved: sure, outcome: 'ready', diagnostics: planned },
    {
      ...base,
      resolved: sure,
      outcome: end as Exclude<StageOutcome, 'ready'>,
      diagnostics: after,
      ...ledgerOf(j, end, next),
    },
  ];
}

function findingsOf(j: number, end: StageOutcome, next: () => number): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (end === 'refused' || end === 'not-created')
    out.push({
      severity: 'error',
      code: 'api.validation',
      message: `bad "quantity" =${j}, ü`,
      field: `jobs[${j}].items[${Math.floor(next() * itemsOf(j))}].quantity`,
    });
  if (end === 'held-back') out.push({ severity: 'error', code: 'run.held-back', message: 'another job failed' });
  if (end === 'awaiting-approval')
    out.push({ severity: 'error', code: 'approval.daily-cost', message: `over the day's cost ${j}` });
  if (end === 'not-processed' || end === 'unknown')
    out.push({ severity: 'error', code: 'api.unavailable', message: 'the API could not be reached' });
  return out;
}

function ledgerOf(j: number, end: StageOutcome, next: () => number): Pick<JobState, 'ledger'> {
  const settled = end === 'created' || end === 'found';
  if (!settled && end !== 'not-created' && end !== 'unknown') return {};
  const entry: LedgerEntry | undefined =
    end === 'unknown'
      ? undefined
      : {
          ledgerVersion: 1,
          account: 'us-demo',
          orderNumber: `PO-${j}`,
          payloadHash: 'h',
          state: settled ? 'submitted' : 'failed',
          attempts: 1,
          intentAt: '2026-03-01T10:00:01Z',
          ...(settled
            ? {
                jobNumber: 700000 + j,
                dateDue: '2026-03-09',
                totalJobCost: 12.5 + j,
                lines: Array.from({ length: itemsOf(j) }, (_, k) => ({
                  customerReference: null,
                  quantity: 10 + j,
                  // New asset SKUs and artwork awaited now and then; most lines neither.
                  newAssetSku: next() < 0.7 ? null : `=SKU,"${j}-${k}"`,
                  needsArtworkToBeUploaded: next() < 0.2,
                })),
              }
            : {}),
        };
  return { ledger: { outcome: end, ...(entry ? { entry } : {}) } };
}

/** Both reports of one input: the whole one (today's) and the one rendered on demand. */
async function both(name: string, text: string) {
  const dir = await tempDirPerTest('htorder-on-demand-');
  const input = join(dir, name);
  await import('node:fs/promises').then((fs) => fs.writeFile(input, text));
  const read = await loadManifest(input);
  const manifest = read.manifest as Manifest;
  const x = {
    command: 'run' as const,
    input: read.input,
    manifest,
    diagnostics: read.diagnostics,
    startedAt: new Date('2026-03-01T10:00:00Z'),
  };
  const whole = buildReport(x);
  const checked = checkedReport(x);
  const reporter = new JobReporter(checked, manifest);
  const spooled = await SpooledReport.create(checked.head, checked.jobCount, reporter.pending, reportPaths(input));
  reporter.spoolTo(spooled.spool);
  return { dir, input, manifest, whole, oldWrite: jobReporter(whole, manifest), reporter, spooled };
}

/** Writes `report` (whole, or spooled) into a folder of its own and reads the three files back. */
async function written(report: ResultReport, manifest: Manifest, input: string, spooled?: SpooledReport) {
  const paths = reportPaths(join(await tempDirPerTest('htorder-on-demand-out-'), basename(input)));
  if (spooled) spooled.refreshSummary();
  else refreshSummary(report);
  await writeReports(report, { manifest, target: { paths, inputShownAs: input }, ...(spooled ? { spooled } : {}) });
  const read = (p: string) => readFile(p, 'utf8').catch(() => null);
  return { json: await read(paths.json), csv: await read(paths.csv), errors: await read(paths.errors) };
}

describe('a report rendered on demand', () => {
  for (const [name, text] of [
    ['orders.csv', csvInput()],
    ['orders.yaml', yamlInput()],
  ] as const) {
    it(`${name}: every write, while jobs run and at the end, is today's report byte for byte`, async () => {
      const { dir, input, manifest, whole, oldWrite, reporter, spooled } = await both(name, text);
      const next = seeded(name.length * 104729);
      const states = Array.from({ length: JOBS }, (_, j) => statesOf(j, next));
      // Jobs are written in a shuffled order within a window, as concurrent jobs end.
      const order = Array.from({ length: JOBS }, (_, j) => j).sort((a, b) => a + next() * 20 - (b + next() * 20));
      const compare = async (when: string) => {
        const want = await written(whole, manifest, input);
        const got = await written(spooled.report, manifest, input, spooled);
        expect(got.json, `result.json ${when}`).toBe(want.json);
        expect(got.csv, `result.csv ${when}`).toBe(want.csv);
        expect(got.errors, `errors.txt ${when}`).toBe(want.errors);
      };
      await compare('before any write');
      // After PLAN: each job written once; those with a submit to come go on.
      for (const [n, j] of order.entries()) {
        const first = states[j][0];
        oldWrite(first);
        if (states[j].length === 1) reporter.end(first);
        else reporter.write(first);
        if (n % 50 === 17) await compare(`after ${n} plan writes`);
      }
      // The submits, and a progress write now and then while jobs run; some jobs end while a
      // write is under way (it renders them from the state it took when it began).
      const sent = order.filter((j) => states[j].length === 2);
      let under: Promise<unknown> | undefined;
      for (const [n, j] of sent.entries()) {
        const last = states[j][1];
        oldWrite(last);
        reporter.end(last);
        if (n % 20 === 3) await compare(`after ${n} submits`);
        if (n % 20 === 9) under = written(spooled.report, manifest, input, spooled);
        if (n % 20 === 12) await under;
        await new Promise(setImmediate);
      }
      await under;
      await compare('at the end');
      // What an alert quotes, and the jobs kept for --json, as from the whole report.
      spooled.refreshSummary();
      refreshSummary(whole);
      const quotes = spooled.quotes();
      expect(quotes.firstErrors(name)).toBe(firstErrors(whole, name));
      expect(quotes.heldReasons(name)).toBe(heldReasons(whole, name));
      // The terminal's summary says what it says of the whole report, reading back from the
      // spool only the jobs its table shows and those whose first errors and warnings it quotes.
      const summary = (report: ResultReport) =>
        formatInputOutcome({ file: input, status: 'ok', report, planned: new Map() }, 'run');
      const reads = vi.spyOn(spooled.spool, 'resultOf');
      expect(summary(spooled.report)).toBe(summary(whole));
      expect(new Set(reads.mock.calls.map(([j]) => j)).size).toBeGreaterThanOrEqual(50);
      expect(reads.mock.calls.length).toBeLessThanOrEqual(50 + 2 * 9);
      reads.mockRestore();
      await spooled.close(true);
      expect(JSON.stringify(spooled.report.jobs)).toBe(JSON.stringify(whole.jobs));
      // The spool's temporary files are gone.
      expect(await readdir(dir)).toEqual([name]);
    });
  }

  it('a job that ends while a write renders it from its earlier state is written as it ended', async () => {
    const { input, manifest, whole, oldWrite, reporter, spooled } = await both('orders.csv', csvInput());
    const sure: KeptResolution = {
      kept: true,
      orderNumber: '',
      jobIndex: 0,
      request: 'r',
      content: 'c',
      estimate: {},
    };
    const base = (j: number) => ({ index: j, orderNumber: `PO-${j}`, hash: 'h', unavailable: false, diagnostics: [] });
    for (let j = 0; j < JOBS; j++) {
      const ready: JobState = { ...base(j), resolved: sure, outcome: 'ready' };
      oldWrite(ready);
      reporter.write(ready);
    }
    // A write begins (its snapshot takes each running job's state)...
    const snap = spooled.spool.snapshot(spooled.report, spooled.pending);
    // ...every job but the last is created (its lines answered without new SKUs or artwork: its
    // items stay unbuilt), the last few waiting to be serialised with the last job...
    const created = (j: number): JobState => ({
      ...base(j),
      resolved: sure,
      outcome: 'created',
      ...ledgerOf(j, 'created', () => 0.5),
    });
    for (let j = 0; j < JOBS - 1; j++) {
      oldWrite(created(j));
      reporter.end(created(j));
    }
    // ...the write renders them from the states it took, and the last one ends.
    for (let j = snap.from; j < snap.from + snap.count; j++) snap.job(j);
    oldWrite(created(JOBS - 1));
    reporter.end(created(JOBS - 1));
    const want = await written(whole, manifest, input);
    const got = await written(spooled.report, manifest, input, spooled);
    expect(got.json).toBe(want.json);
    expect(got.csv).toBe(want.csv);
    await spooled.close();
  });

  it('result.csv shows each job as it was when the write began, though its rows are made as they are written', async () => {
    const { input, manifest, whole, oldWrite, reporter, spooled } = await both('orders.csv', csvInput());
    const next = seeded(11);
    const states = Array.from({ length: JOBS }, (_, j) => statesOf(j, next));
    // Half the jobs have ended, the others are running, when a write begins...
    for (let j = 0; j < JOBS; j++) {
      const state = j % 2 === 0 ? states[j][states[j].length - 1] : states[j][0];
      oldWrite(state);
      if (j % 2 === 0) reporter.end(state);
      else reporter.write(state);
    }
    const want = (await written(whole, manifest, input)).csv;
    const jobsNow = spooled.jobsNow();
    // ...and every job ends, differently, before its rows are made.
    for (let j = 1; j < JOBS; j += 2) reporter.end({ ...states[j][states[j].length - 1], outcome: 'not-processed' });
    const out = join(await tempDirPerTest('htorder-on-demand-out-'), 'orders.result.csv');
    await writeResultCsv(out, spooled.report, { manifest, jobsNow });
    expect(await readFile(out, 'utf8')).toBe(want);
    await spooled.close();
  });

  it('a write shows one moment: a job that fails as the write begins is in result.json, its summary and errors.txt alike', async () => {
    const { input, manifest, reporter, spooled } = await both('orders.csv', csvInput());
    const fail = allReady(reporter);
    spooled.refreshSummary();
    // The report's summary was taken with no failure; job 0 fails once the write is under way.
    setImmediate(() => fail(0));
    const paths = reportPaths(join(await tempDirPerTest('htorder-on-demand-out-'), basename(input)));
    await writeReports(spooled.report, { manifest, target: { paths, inputShownAs: input }, spooled });
    const json = JSON.parse(await readFile(paths.json, 'utf8')) as ResultReport;
    const errors = await readFile(paths.errors, 'utf8').catch(() => null);
    expect(json.summary.byStatus.failed).toBe(1);
    expect(json.summary.errors).toBeGreaterThan(0);
    expect(json.jobs[0].status).toBe('failed');
    expect(errors).toContain(FAILURE.message);
    expect(spooled.report.summary).toEqual(json.summary);
    await spooled.close();
  });

  it('a write shows one moment in result.csv too: a job that fails once the write has begun is running in every file', async () => {
    const { input, manifest, reporter, spooled } = await both('orders.csv', csvInput());
    const fail = allReady(reporter);
    // Job 0 fails once the write has rendered its first running job (its snapshot is taken then).
    const { render } = reporter.pending;
    let ended = false;
    reporter.pending.render = (j, at) => {
      if (!ended) {
        ended = true;
        setImmediate(() => fail(0));
      }
      return render(j, at);
    };
    const paths = reportPaths(join(await tempDirPerTest('htorder-on-demand-out-'), basename(input)));
    await writeReports(spooled.report, { manifest, target: { paths, inputShownAs: input }, spooled });
    expect(spooled.spool.statusOf(0)).toBe('failed');
    const json = JSON.parse(await readFile(paths.json, 'utf8')) as ResultReport;
    expect(json.jobs[0].status).toBe('valid');
    expect(json.summary.byStatus.failed).toBe(0);
    expect(await readFile(paths.csv, 'utf8')).not.toContain(FAILURE.message);
    expect(await readFile(paths.errors, 'utf8')).not.toContain(FAILURE.message);
    await spooled.close();
  });

  it('let go of its jobs unless asked to keep them, and leaves no temporary file behind', async () => {
    const { dir, input, manifest, reporter, spooled } = await both('orders.csv', csvInput());
    expect((await readdir(dirname(input))).length).toBe(3); // the input and the spool's two files
    const next = seeded(5);
    for (let j = 0; j < JOBS; j++) reporter.end(statesOf(j, next)[0]);
    await written(spooled.report, manifest, input, spooled);
    await spooled.close();
    expect(() => spooled.report.jobs[0]).toThrow(/no longer held/);
    expect(spooled.report.jobs).toHaveLength(JOBS);
    expect(await readdir(dir)).toEqual(['orders.csv']);
  });
});

const FAILURE: Diagnostic = { severity: 'error', code: 'api.unavailable', message: 'the API could not be reached' };

/** Every job written as ready to send; answers how one of them then fails (not processed: FAILURE). */
function allReady(reporter: JobReporter): (j: number) => void {
  const sure: KeptResolution = { kept: true, orderNumber: '', jobIndex: 0, request: 'r', content: 'c', estimate: {} };
  const base = (j: number) => ({ index: j, orderNumber: `PO-${j}`, hash: 'h', unavailable: false, diagnostics: [] });
  for (let j = 0; j < JOBS; j++) reporter.write({ ...base(j), resolved: sure, outcome: 'ready' });
  return (j) => {
    reporter.end({ ...base(j), resolved: sure, outcome: 'not-processed', diagnostics: [FAILURE] });
  };
}
