import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { LedgerEntry } from '../../src/storage/ledger/model.js';
import type { Diagnostic, Manifest } from '../../src/manifest/model.js';
import { jobReporter } from '../../src/pipeline/job-report.js';
import type { JobState, StageOutcome } from '../../src/pipeline/job-state.js';
import { refreshSummary } from '../../src/report/build-report.js';
import type { ResultReport } from '../../src/report/model.js';
import { reportPaths } from '../../src/report/report-paths.js';
import { ReportWriter } from '../../src/report/report-writer.js';
import { writeReports } from '../../src/report/write-reports.js';
import { reportOfInput, writeInput } from '../support/manifest-files.js';
import { seeded } from '../support/seeded-random.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * A report is rewritten as its jobs' outcomes arrive: every rewrite shows the report as it is
 * then, byte for byte what a first write of it into a new folder gives.
 */

/** Jobs enough for several batches (64 jobs each) and a short last one. */
const JOBS = 150;
/** Items of job j: 1 to 3. */
const itemsOf = (j: number): number => 1 + (j % 3);

function yamlInput(): string {
  const lines = ['version: 1', 'defaults: { deliveryAddress: { deliveryMethod: UPS Ground, country: US } }', 'jobs:'];
  for (let j = 0; j < JOBS; j++) {
    lines.push(`  - orderNumber: PO-${j}`, '    items:');
    for (let k = 0; k < itemsOf(j); k++)
      lines.push(`      - { itemType: Asset, code: A1000${k}, quantity: ${10 + j} }`);
  }
  return `${lines.join('\n')}\n`;
}

function csvInput(): string {
  const rows = ['orderNumber,deliveryMethod,itemType,code,quantity'];
  for (let j = 0; j < JOBS; j++)
    for (let k = 0; k < itemsOf(j); k++) rows.push(`PO-${j},${k === 0 ? 'UPSGND' : ''},Asset,A1000${k},${10 + j}`);
  return `${rows.join('\r\n')}\r\n`;
}

async function begin(name: string, text: string) {
  const input = await writeInput(name, text);
  const { report, manifest } = await reportOfInput(input);
  if (manifest === undefined) throw new Error('the test input did not load');
  expect(report.jobs).toHaveLength(JOBS);
  return { input, report, manifest };
}

const OUTCOMES: StageOutcome[] = ['checked', 'refused', 'held-back', 'created', 'found', 'not-created', 'unknown'];

/** A job state as a stage would leave it: an outcome, maybe a ledger entry, maybe findings. */
function stateOf(j: number, next: () => number, n: number): JobState {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const outcome = pick(OUTCOMES);
  const diagnostics: Diagnostic[] = [];
  if (next() < 0.3)
    diagnostics.push({ severity: 'warning', code: 'w.test', message: `note ${n}`, field: `jobs[${j}]` });
  if (next() < 0.2)
    diagnostics.push({
      severity: 'error',
      code: 'api.validation',
      message: `bad "quantity" =${n}, ü`,
      field: `jobs[${j}].items[${Math.floor(next() * itemsOf(j))}].quantity`,
    });
  if (next() < 0.1) diagnostics.push({ severity: 'error', code: 'api.other', message: `job-level ${n}` });
  const settled = outcome === 'created' || outcome === 'found';
  const entry: LedgerEntry | undefined =
    settled || outcome === 'not-created'
      ? {
          ledgerVersion: 1,
          account: 'us-demo',
          orderNumber: `PO-${j}`,
          payloadHash: 'h',
          state: settled ? 'submitted' : 'failed',
          attempts: 1,
          intentAt: '2026-03-01T10:00:01Z',
          ...(settled
            ? {
                jobNumber: 700000 + n,
                dateDue: '2026-03-09',
                totalJobCost: 12.5 + n,
                lines: Array.from({ length: itemsOf(j) }, (_, k) => ({
                  customerReference: null,
                  quantity: 10 + j,
                  newAssetSku: next() < 0.5 ? null : `=SKU,"${n}-${k}"`,
                  needsArtworkToBeUploaded: next() < 0.5,
                })),
              }
            : {}),
        }
      : undefined;
  const ledger = entry || outcome === 'unknown' ? { outcome, ...(entry ? { entry } : {}) } : undefined;
  return {
    index: j,
    orderNumber: `PO-${j}`,
    hash: 'h',
    outcome: outcome as Exclude<StageOutcome, 'ready'>,
    diagnostics,
    unavailable: false,
    ...(ledger ? { ledger } : {}),
  };
}

/** Writes the report into a folder of its own, and returns the two files. */
async function fresh(report: ResultReport, manifest: Manifest, input: string) {
  const paths = reportPaths(join(await tempDirPerTest('htorder-uncached-'), basename(input)));
  await writeReports(report, { manifest, target: { paths, inputShownAs: input } });
  return { json: await readFile(paths.json), csv: await readFile(paths.csv) };
}

const files = async (input: string) => {
  const paths = reportPaths(input);
  return { json: await readFile(paths.json), csv: await readFile(paths.csv) };
};

describe('rewrites', () => {
  for (const [name, text] of [
    ['orders.yaml', yamlInput()],
    ['orders.csv', csvInput()],
  ] as const) {
    it(`${name}: after random changes through the real jobReporter, every rewrite equals a fresh write`, async () => {
      const { input, report, manifest } = await begin(name, text);
      const reporter = jobReporter(report, manifest);
      const next = seeded(name.length * 7919);
      for (let round = 0; round < 12; round++) {
        // A few jobs change (sometimes none, sometimes many), as outcomes arrive between writes.
        const changes = round === 0 ? JOBS : Math.floor(next() * (round % 4 === 0 ? 60 : 6));
        for (let c = 0; c < changes; c++) {
          const j = round === 0 ? c : Math.floor(next() * JOBS);
          reporter(stateOf(j, next, round * 1000 + c));
        }
        // Reading a job's items builds them (lazy-items.ts) without changing the text: not a change.
        if (next() < 0.5) void report.jobs[Math.floor(next() * JOBS)].items;
        report.finishedAt = `2026-03-01T10:00:${String(round).padStart(2, '0')}Z`;
        refreshSummary(report);
        await writeReports(report, { manifest });
        const got = await files(input);
        const want = await fresh(report, manifest, input);
        expect(got.json.equals(want.json), `result.json, round ${round}`).toBe(true);
        expect(got.csv.equals(want.csv), `result.csv, round ${round}`).toBe(true);
        expect(got.json.toString('utf8')).toBe(`${JSON.stringify(report, null, 2)}\n`);
      }
    });
  }

  it('a change to a job after a progress write shows in the next write', async () => {
    const { input, report, manifest } = await begin('orders.yaml', yamlInput());
    const reporter = jobReporter(report, manifest);
    const writer = new ReportWriter(report, { manifest, intervalMs: 0 });
    for (let j = 0; j < JOBS; j++) reporter({ ...stateOf(j, seeded(j), 0), outcome: 'held-back' });
    writer.schedule();
    await vi.waitFor(async () => expect((await files(input).catch(() => undefined))?.json.length).toBeGreaterThan(0));
    const before = await files(input);
    expect(JSON.parse(before.json.toString('utf8')).jobs[70].jobNumber).toBeNull();

    // Job 70 (the second batch) is created; job 0 reads its items, which changes nothing.
    reporter({
      index: 70,
      orderNumber: 'PO-70',
      hash: 'h',
      diagnostics: [],
      unavailable: false,
      outcome: 'created',
      ledger: {
        outcome: 'created',
        entry: {
          ledgerVersion: 1,
          account: 'us-demo',
          orderNumber: 'PO-70',
          payloadHash: 'h',
          state: 'submitted',
          attempts: 1,
          intentAt: '2026-03-01T10:00:01Z',
          jobNumber: 812345,
          lines: [{ customerReference: null, quantity: 80, newAssetSku: 'NEW-SKU-70', needsArtworkToBeUploaded: true }],
        },
      },
    });
    void report.jobs[0].items;
    await writer.flush();
    const after = await files(input);
    const json = JSON.parse(after.json.toString('utf8')) as ResultReport;
    expect(json.jobs[70]).toMatchObject({ status: 'submitted', jobNumber: 812345 });
    expect(json.jobs[70].items[0]).toMatchObject({ newAssetSku: 'NEW-SKU-70', needsArtworkToBeUploaded: true });
    expect(after.csv.toString('utf8')).toMatch(/^PO-70,0,\d+,Asset,A10000,80,submitted,812345,NEW-SKU-70,true,$/m);
    expect(json.summary.byStatus.submitted).toBe(1);
    const want = await fresh(report, manifest, input);
    expect(after.json.equals(want.json)).toBe(true);
    expect(after.csv.equals(want.csv)).toBe(true);
  });
});

describe('the final write after a progress write under way', () => {
  it('writes the report as it is', async () => {
    const { input, report, manifest } = await begin('orders.yaml', yamlInput());
    const writer = new ReportWriter(report, { manifest, intervalMs: 0 });
    // No pause: the progress write is under way when flush() arrives.
    writer.schedule();
    report.finishedAt = '2026-03-01T10:00:59Z';
    await writer.flush();
    expect((await files(input)).json.toString('utf8')).toBe(`${JSON.stringify(report, null, 2)}\n`);
  });
});
