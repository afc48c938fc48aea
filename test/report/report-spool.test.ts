import { execFile } from 'node:child_process';
import { access, lstat, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptySummary, refreshSummary } from '../../src/report/build-report.js';
import { itemDeferrer, itemsPending } from '../../src/report/lazy-items.js';
import {
  type ItemResult,
  JOB_STATUSES,
  type JobResult,
  type JobStatus,
  type ReportError,
  type ResultReport,
} from '../../src/report/model.js';
import { type ReportPaths, reportPaths } from '../../src/report/report-paths.js';
import { ReportSpool, writeSpooledErrors, writeSpooledJson } from '../../src/report/report-spool.js';
import { writeErrorsTxt } from '../../src/report/write-errors-txt.js';
import { batchJson, resultJsonChunks } from '../../src/report/write-result-json.js';
import { DIST, requireDist } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';

/** Text with the awkward parts JSON and errors.txt escape: quotes, controls, astral characters, lone surrogates. */
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', '\\', '\n', '\u001b', '\u2028', 'é', '😀', '\ud800', ' '),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 12,
});

const reportError: fc.Arbitrary<ReportError> = fc.record({
  code: fc.constantFrom('run.failed', 'run.held-back', 'schema.unknown-field'),
  message: text,
  field: fc.option(text, { nil: null }),
  source: fc.oneof(
    fc.constant(null),
    fc.record({ line: fc.nat(99), column: fc.nat(99) }),
    fc.record({ row: fc.nat(999) }),
    fc.record({ row: fc.nat(999), columnName: text, file: text }),
  ),
});

const errorList = fc.oneof(fc.constant([] as ReportError[]), fc.array(reportError, { maxLength: 3 }));

/** Everything of a job but its items, and how its items come: built (with their own findings) or pending. */
const jobSpec = fc.record({
  orderNumber: fc.option(text, { nil: null }),
  status: fc.constantFrom(...JOB_STATUSES),
  reason: fc.option(text, { nil: undefined }),
  jobNumber: fc.option(fc.nat(), { nil: null }),
  dateDue: fc.option(fc.constant('2026-12-04'), { nil: null }),
  totalJobCost: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
  currency: fc.option(fc.constantFrom('USD', 'EUR'), { nil: undefined }),
  warnings: errorList,
  errors: errorList,
  itemCount: fc.nat(4),
  built: fc.option(
    fc.array(
      fc.record({
        status: fc.constantFrom(...JOB_STATUSES),
        newAssetSku: fc.option(text, { nil: null }),
        needsArtworkToBeUploaded: fc.option(fc.boolean(), { nil: null }),
        errors: errorList,
      }),
      { maxLength: 4 },
    ),
    { nil: undefined },
  ),
});

const reportSpec = fc.record({
  file: fc.constantFrom('orders.csv', 'Bestellungen Ü.yaml'),
  mapping: fc.option(fc.record({ preset: fc.constant('shopify'), matchedColumns: fc.array(text, { maxLength: 3 }) }), {
    nil: undefined,
  }),
  fileErrors: fc.oneof(fc.constant([] as ReportError[]), fc.array(reportError, { maxLength: 2 })),
  fileWarnings: fc.oneof(fc.constant([] as ReportError[]), fc.array(reportError, { maxLength: 2 })),
  // Past two batches of result.json's serialiser now and then.
  jobs: fc.oneof(fc.array(jobSpec, { maxLength: 12 }), fc.array(jobSpec, { minLength: 60, maxLength: 140 })),
});

type ReportSpec = typeof reportSpec extends fc.Arbitrary<infer T> ? T : never;

function pendingItem(j: number, k: number, status: JobStatus): ItemResult {
  return {
    index: k,
    source: { row: 2 + j * 4 + k },
    itemType: 'Asset',
    code: `A${j}·${k}`,
    quantity: k + 1,
    status,
    newAssetSku: null,
    needsArtworkToBeUploaded: null,
    errors: [],
  };
}

/** A report as buildReport and the pipeline leave it: some jobs' items built and written on, the others pending. */
function reportOf(spec: ReportSpec): ResultReport {
  const counts = spec.jobs.map((j) => j.built?.length ?? j.itemCount);
  const defer = itemDeferrer({ count: (j) => counts[j], build: pendingItem }, spec.jobs.length);
  const jobs = spec.jobs.map((s, index) => {
    const job = defer({
      index,
      orderNumber: s.orderNumber,
      status: s.status,
      ...(s.reason === undefined ? {} : { reason: s.reason }),
      source: { row: 2 + index * 4 },
      jobNumber: s.jobNumber,
      dateDue: s.dateDue,
      totalJobCost: s.totalJobCost,
      estimatedCost: null,
      ...(s.currency === undefined ? {} : { currency: s.currency }),
      warnings: s.warnings,
      errors: s.errors,
    });
    for (const [k, b] of (s.built ?? []).entries()) Object.assign(job.items[k], b);
    return job;
  });
  const report: ResultReport = {
    reportVersion: 1,
    command: 'run',
    htorderVersion: '0.1.0',
    input: { file: spec.file, sha256: null, format: 'csv' },
    ...(spec.mapping === undefined ? {} : { mapping: spec.mapping }),
    startedAt: '2026-03-01T10:00:00.000Z',
    finishedAt: null,
    summary: emptySummary(),
    errors: spec.fileErrors,
    warnings: spec.fileWarnings,
    jobs,
  };
  return refreshSummary(report);
}

/** Each job's place in an end order where jobs finish out of order by up to `window` places. */
function endOrder(n: number, jitter: readonly number[]): number[] {
  const keyed = Array.from({ length: n }, (_, i) => ({ i, key: i + (jitter[i % jitter.length] ?? 0) }));
  return keyed.sort((a, b) => a.key - b.key || a.i - b.i).map((k) => k.i);
}

async function readOrNull(path: string): Promise<string | null> {
  return readFile(path, 'utf8').catch(() => null);
}

/**
 * Ends the first half of `order`, then writes result.json while the rest go on ending
 * (endWhileWriting), the caller holding only the running jobs (asked for an ended one, it has
 * none); the file must be the report as the write began. Answers where the ending stopped.
 */
async function writeWhileEnding(
  spool: ReportSpool,
  paths: ReportPaths,
  report: ResultReport,
  order: readonly number[],
  running: (index: number) => JobResult,
  ended: (index: number) => JobResult,
): Promise<number> {
  const n = order.length;
  const jobs = Math.max(n, ...order.map((i) => i + 1));
  const isEnded = new Uint8Array(jobs);
  const end = (i: number) => {
    isEnded[i] = 1;
    spool.end(i, ended(i));
  };
  let next = 0;
  for (; next < n / 2; next++) end(order[next]);
  const asked = new Set<number>();
  const pending = (i: number): JobResult => {
    if (isEnded[i] === 1) throw new Error(`job ${i} has ended: its holder let go of it`);
    asked.add(i);
    return running(i);
  };
  next = await endWhileWriting(
    writeSpooledJson(paths.json, report, spool, pending),
    () => asked.size > 0,
    order,
    next,
    end,
  );
  const then = { ...report, jobs: Array.from({ length: jobs }, (_, i) => (asked.has(i) ? running(i) : ended(i))) };
  expect(await readFile(paths.json, 'utf8')).toBe([...resultJsonChunks(refreshSummary(then))].join(''));
  return next;
}

/**
 * Ends the jobs of `order` from `next` on, 50 at a time, while `write` runs, once it has begun
 * (`begun`: it asked for a running job; the jobs ended before are before it); answers where it
 * stopped. Fails unless some ended during the write.
 */
async function endWhileWriting(
  write: Promise<void>,
  begun: () => boolean,
  order: readonly number[],
  next: number,
  end: (index: number) => void,
): Promise<number> {
  let done = false;
  const written = write.finally(() => {
    done = true;
  });
  let endedDuring = 0;
  while (!done && next < order.length) {
    await new Promise(setImmediate);
    if (!begun()) continue;
    for (const i of order.slice(next, next + 50)) end(i);
    next += 50;
    endedDuring += 50;
  }
  await written;
  expect(endedDuring).toBeGreaterThan(0);
  return next;
}

/** A report of `spec` in a folder of its own, and its reports as the whole report writes them. */
async function expected(spec: Parameters<typeof reportOf>[0]) {
  const dir = await tempDirPerTest('htorder-spool-');
  const report = reportOf(spec);
  const input = join(dir, spec.file);
  const paths = reportPaths(input);
  const pending = (i: number) => report.jobs[i];
  const want = [...resultJsonChunks(report)].join('');
  const wantErrorsPath = join(dir, 'want.errors.txt');
  const wroteErrors = await writeErrorsTxt(wantErrorsPath, { ...report, input: { ...report.input, file: input } });
  const wantErrors = await readOrNull(wantErrorsPath);
  await rm(wantErrorsPath, { force: true });
  return { dir, report, input, paths, pending, want, wroteErrors, wantErrors };
}

describe('ReportSpool', () => {
  it('assembles result.json, the summary and errors.txt exactly as the whole report gives them, whatever the end order', async () => {
    await fc.assert(
      fc.asyncProperty(
        reportSpec,
        fc.array(fc.nat(16), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        async (spec, jitter, progressAt, settle) => {
          const { dir, report, input, paths, pending, want, wroteErrors, wantErrors } = await expected(spec);

          const spool = await ReportSpool.create(paths, report.jobs.length, input);
          const check = async () => {
            expect(spool.summary(report, pending)).toEqual(report.summary);
            await writeSpooledJson(paths.json, report, spool, pending);
            expect(await readFile(paths.json, 'utf8')).toBe(want);
            expect(await writeSpooledErrors(paths.errors, report, spool, pending)).toBe(wroteErrors);
            expect(await readOrNull(paths.errors)).toBe(wantErrors);
          };
          const order = endOrder(report.jobs.length, jitter);
          const progress = new Set(progressAt.map((p) => p % (order.length + 1)));
          for (const [n, index] of order.entries()) {
            if (progress.has(n)) await check(); // a progress write: part spooled, part pending
            spool.end(index, report.jobs[index]);
            if (settle) await spool.flushed();
          }
          await check();
          for (const [index, job] of report.jobs.entries()) {
            expect(spool.statusOf(index)).toBe(job.status);
            const own =
              job.errors.length + (itemsPending(job) ? 0 : job.items.reduce((n, i) => n + i.errors.length, 0));
            expect(spool.hasErrors(index)).toBe(own > 0);
          }
          await spool.close();
          // Only the reports are left; the spool's files are gone.
          expect((await readdir(dir)).filter((n) => n.startsWith('.'))).toEqual([]);
        },
      ),
      { numRuns: 120 },
    );
  });

  it('past the jobs it holds in memory, sets those that end ahead of a job held back aside, and its reports stay the same', async () => {
    await fc.assert(
      fc.asyncProperty(
        reportSpec,
        fc.array(fc.nat(16), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.nat(12),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        async (spec, jitter, heldBackAt, heldWeight, progressAt, settle) => {
          const { dir, report, input, paths, pending, want, wroteErrors, wantErrors } = await expected(spec);
          // Each ended job read back (held, set aside or spooled) is the job: its own text in result.json.
          const wantJobs = report.jobs.map((job) => batchJson([job]));

          const spool = await ReportSpool.create(paths, report.jobs.length, input, { heldWeight });
          const ended: number[] = [];
          const check = async () => {
            expect(spool.summary(report, pending)).toEqual(report.summary);
            for (const i of ended) expect(batchJson([spool.resultOf(i) as JobResult])).toBe(wantJobs[i]);
            await writeSpooledJson(paths.json, report, spool, pending);
            expect(await readFile(paths.json, 'utf8')).toBe(want);
            expect(await writeSpooledErrors(paths.errors, report, spool, pending)).toBe(wroteErrors);
            expect(await readOrNull(paths.errors)).toBe(wantErrors);
          };
          // One job is held back to the end: every other one ends ahead of it.
          const order = endOrder(report.jobs.length, jitter);
          const [heldBack] = order.splice(heldBackAt % Math.max(order.length, 1), 1);
          if (heldBack !== undefined) order.push(heldBack);
          const progress = new Set(progressAt.map((p) => p % (order.length + 1)));
          for (const [n, index] of order.entries()) {
            if (progress.has(n)) await check();
            spool.end(index, report.jobs[index]);
            ended.push(index);
            if (settle) await spool.flushed();
          }
          await check();
          await spool.close();
          expect((await readdir(dir)).filter((n) => n.startsWith('.'))).toEqual([]);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('holds only so much of the jobs that end ahead in memory: the others wait in a side file, gone once it closes', async () => {
    const dir = await tempDirPerTest('htorder-spool-');
    const n = 400;
    const report = reportOf({ file: 'orders.csv', mapping: undefined, fileErrors: [], fileWarnings: [], jobs: [] });
    const jobs = Array.from({ length: n }, (_, index): JobResult => ({ ...pendingJob, index, jobNumber: index }));
    const whole = refreshSummary({ ...report, jobs });
    const paths = reportPaths(join(dir, 'orders.csv'));
    const spool = await ReportSpool.create(paths, n, paths.json, { heldWeight: 16 });
    for (let i = 1; i < n; i++) spool.end(i, jobs[i]);
    await spool.flushed();
    // Job 0 runs: 16 jobs are held, the other 383 are in a third file, and nothing is in the spool yet.
    const files = await spoolFiles(dir);
    expect(files).toHaveLength(3);
    const sizes = await Promise.all(files.map(async (name) => (await lstat(join(dir, name))).size));
    expect(sizes.sort((a, b) => a - b)).toEqual([0, 0, expect.any(Number)]);
    expect(spool.resultOf(399)).toEqual(jobs[399]);
    await spool.close();
    expect(await readdir(dir)).toEqual([]);

    // Ended at last, job 0 lets the others be copied into the spool in order.
    const again = await ReportSpool.create(paths, n, paths.json, { heldWeight: 16 });
    for (let i = 1; i < n; i++) again.end(i, jobs[i]);
    again.end(0, jobs[0]);
    await again.flushed();
    await writeSpooledJson(paths.json, whole, again, () => {
      throw new Error('every job has ended');
    });
    expect(await readFile(paths.json, 'utf8')).toBe([...resultJsonChunks(whole)].join(''));
    await again.close();
    expect(await readdir(dir)).toEqual(['orders.csv.result.json']);
  });

  it('reads each ended job back as it was spooled, in order, out of order and while more jobs end', async () => {
    // Jobs of uneven sizes over many of the blocks the spool reads at once; each is read back
    // while later ones are still being spooled (the file grows past a block read earlier), then
    // all in order (as result.csv reads them), then in a random order.
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(1500), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 1500, maxLength: 1500 }),
        async (sizes, picks) => {
          const dir = await tempDirPerTest('htorder-spool-');
          const n = 1500;
          const jobs = Array.from(
            { length: n },
            (_, index): JobResult => ({ ...pendingJob, index, reason: 'é'.repeat(sizes[index % sizes.length]) }),
          );
          const paths = reportPaths(join(dir, 'orders.csv'));
          const spool = await ReportSpool.create(paths, n, paths.json);
          const readBack = (i: number) =>
            expect(batchJson([spool.resultOf(i) as JobResult])).toBe(batchJson([jobs[i]]));
          for (let i = 0; i < n; i++) {
            spool.end(i, jobs[i]);
            if (i % 97 === 0) {
              await spool.flushed();
              readBack(picks[i] % (i + 1));
              readBack(i);
            }
          }
          await spool.flushed();
          for (let i = 0; i < n; i++) readBack(i);
          for (const pick of picks) readBack(pick % n);
          await spool.close();
        },
      ),
      { numRuns: 8 },
    );
  });

  it('writes the report as it was when the write began, while jobs go on ending and their holders let go of them', async () => {
    const dir = await tempDirPerTest('htorder-spool-');
    const n = 3000;
    const running = (index: number): JobResult => ({ ...pendingJob, index, status: 'valid', jobNumber: null });
    const ended = (index: number): JobResult => ({ ...pendingJob, index, jobNumber: index });
    const report = reportOf({ file: 'orders.csv', mapping: undefined, fileErrors: [], fileWarnings: [], jobs: [] });
    const paths = reportPaths(join(dir, 'orders.csv'));
    const spool = await ReportSpool.create(paths, n, paths.json);
    const order = endOrder(n, [3, 0, 16, 7, 1]);
    await writeWhileEnding(spool, paths, report, order, running, ended);
    await spool.close();
  });

  it('writes the report as it was when the write began while jobs go on being set aside, then copies them in order', async () => {
    const dir = await tempDirPerTest('htorder-spool-');
    const n = 3000;
    const running = (index: number): JobResult => ({ ...pendingJob, index, status: 'valid', jobNumber: null });
    const failed = (index: number): ReportError[] =>
      index % 7 === 0 ? [{ code: 'run.failed', message: `job ${index}`, field: null, source: null }] : [];
    const ended = (index: number): JobResult => ({ ...pendingJob, index, jobNumber: index, errors: failed(index) });
    const report = reportOf({ file: 'orders.csv', mapping: undefined, fileErrors: [], fileWarnings: [], jobs: [] });
    const paths = reportPaths(join(dir, 'orders.csv'));
    const spool = await ReportSpool.create(paths, n, paths.json, { heldWeight: 16 });
    // Job 0 is held back: every other job ends ahead of it, and all but a few go aside.
    const order = endOrder(n, [3, 0, 16, 7, 1]).filter((i) => i !== 0);
    let next = await writeWhileEnding(spool, paths, report, order, running, ended);
    for (; next < order.length; next++) spool.end(order[next], ended(order[next]));
    spool.end(0, ended(0));
    const all = refreshSummary({ ...report, jobs: Array.from({ length: n }, (_, i) => ended(i)) });
    const none = () => {
      throw new Error('every job has ended');
    };
    await writeSpooledJson(paths.json, all, spool, none);
    expect(await readFile(paths.json, 'utf8')).toBe([...resultJsonChunks(all)].join(''));
    const wantErrors = join(dir, 'want.errors.txt');
    await writeErrorsTxt(wantErrors, { ...all, input: { ...all.input, file: paths.json } });
    expect(await writeSpooledErrors(paths.errors, all, spool, none)).toBe(true);
    expect(await readFile(paths.errors, 'utf8')).toBe(await readFile(wantErrors, 'utf8'));
    await spool.close();
  });

  it('asks its caller to wait while more than a few megabytes wait for the disk', async () => {
    const dir = await tempDirPerTest('htorder-spool-');
    const paths = reportPaths(join(dir, 'orders.csv'));
    const n = 4000;
    const spool = await ReportSpool.create(paths, n, paths.json);
    const message = 'x'.repeat(2000);
    const job = (index: number): JobResult => ({
      ...pendingJob,
      index,
      errors: [{ code: 'run.failed', message, field: null, source: null }],
    });
    const answers: boolean[] = [];
    for (let i = 0; i < n / 2; i++) answers.push(spool.end(i, job(i)));
    // About 4 KB a job (its JSON and its errors.txt line) with nothing written yet: past 4 MB by the last.
    expect(answers[0]).toBe(true);
    expect(answers.at(-1)).toBe(false);
    await spool.flushed();
    expect(spool.end(n / 2, job(n / 2))).toBe(true);
    await spool.close();
  });

  it('refuses a job twice, a job out of range, and a write once its file was removed or replaced', async () => {
    const dir = await tempDirPerTest('htorder-spool-');
    const report = reportOf({ file: 'orders.csv', mapping: undefined, fileErrors: [], fileWarnings: [], jobs: [] });
    const paths = reportPaths(join(dir, 'orders.csv'));
    const job = (index: number): JobResult => ({ ...pendingJob, index });
    const spool = await ReportSpool.create(paths, 3, paths.json);
    spool.end(1, job(1));
    expect(() => spool.end(1, job(1))).toThrow(/ended already/);
    expect(() => spool.end(3, job(3))).toThrow(/no job 3/);
    const [jsonSpool, errorsSpool] = await spoolFiles(dir);
    // Removed: the write fails, and leaves no result.json nor a temporary file.
    await rm(join(dir, jsonSpool));
    await expect(writeSpooledJson(paths.json, report, spool, () => job(0))).rejects.toThrow(/removed or replaced/);
    // Replaced by another file of the same name: the same, and closing leaves that file alone.
    await writeFile(join(dir, 'planted'), 'not mine');
    await rename(join(dir, 'planted'), join(dir, errorsSpool));
    await writeFile(join(dir, jsonSpool), 'not mine either');
    await expect(writeSpooledErrors(paths.errors, report, spool, () => job(0))).rejects.toThrow(/removed or replaced/);
    await spool.close();
    expect((await readdir(dir)).sort()).toEqual([jsonSpool, errorsSpool].sort());
    expect(await readFile(join(dir, errorsSpool), 'utf8')).toBe('not mine');
    expect(() => spool.end(0, job(0))).toThrow(/closed/);
  });

  it('makes its files exclusively, readable by the owner only, beside the reports', async () => {
    const dir = await tempDirPerTest('htorder-spool-');
    const paths = reportPaths(join(dir, 'orders.csv'));
    const spool = await ReportSpool.create(paths, 1, paths.json);
    const names = await spoolFiles(dir);
    expect(names).toHaveLength(2);
    const { stat } = await import('node:fs/promises');
    for (const name of names) expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
    await spool.close();
    expect(await readdir(dir)).toEqual([]);
    await expect(access(paths.json)).rejects.toThrow();
  });
});

const pendingJob: JobResult = {
  index: 0,
  orderNumber: 'PO-1',
  status: 'submitted',
  source: { row: 2 },
  jobNumber: 1,
  dateDue: null,
  totalJobCost: 1,
  estimatedCost: null,
  warnings: [],
  errors: [],
  items: [],
};

async function spoolFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith('.tmp'));
}

/**
 * A process whose files may not grow past `blocks` × 512 bytes (`ulimit -f`: writes past it fail
 * with EFBIG, a real disk error): it spools `ended` of `jobs` small jobs, then writes result.json
 * over an earlier one. What each step answered, and the folder's names before and after close.
 */
const CHILD = `
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
const [moduleUrl, dir, jobs, ended, heldWeight] = process.argv.slice(2);
const { ReportSpool, writeSpooledJson } = await import(moduleUrl);
const job = (index) => ({ index, orderNumber: 'PO-' + index, status: 'submitted', source: { row: index + 2 },
  jobNumber: index, dateDue: null, totalJobCost: 1, estimatedCost: null, warnings: [], errors: [], items: [] });
const input = join(dir, 'orders.csv');
const head = { reportVersion: 1, command: 'run', htorderVersion: '0.1.0', input: { file: input, sha256: null, format: 'csv' },
  startedAt: '2026-03-01T10:00:00.000Z', finishedAt: null, summary: {}, errors: [], warnings: [] };
const paths = { json: input + '.result.json', errors: input + '.errors.txt' };
await writeFile(paths.json, 'earlier');
const out = {};
const answer = (p) => p.then(() => 'ok', (e) => e.code ?? e.message);
// With a held weight, job 0 is held back: the jobs after it end ahead, and most go to a side file.
const options = heldWeight === undefined ? {} : { heldWeight: Number(heldWeight) };
const spool = await ReportSpool.create(paths, Number(jobs), input, options);
for (let i = 0; i < Number(ended); i++) {
  spool.end(heldWeight === undefined ? i : i + 1, job(heldWeight === undefined ? i : i + 1));
  if (i % 64 === 63) await spool.flushed().catch(() => undefined);
}
out.spooled = await answer(spool.flushed());
out.json = await answer(writeSpooledJson(paths.json, head, spool, job));
out.before = (await readdir(dir)).sort();
await spool.close();
out.after = (await readdir(dir)).sort();
console.log(JSON.stringify(out));
`;

async function underFileSizeLimit(blocks: number, jobs: number, ended: number, heldWeight?: number) {
  const dir = await tempDirPerTest('htorder-spool-');
  const script = join(dir, 'child.mjs');
  await writeFile(script, CHILD);
  await writeFile(join(dir, 'orders.csv'), '');
  const module = pathToFileURL(join(DIST, 'report/report-spool.js')).href;
  const { stdout } = await promisify(execFile)('sh', [
    '-c',
    `ulimit -f ${blocks} && exec "$@"`,
    'sh',
    process.execPath,
    script,
    module,
    dir,
    String(jobs),
    String(ended),
    ...(heldWeight === undefined ? [] : [String(heldWeight)]),
  ]);
  const out = JSON.parse(stdout) as { spooled: string; json: string; before: string[]; after: string[] };
  return { ...out, earlier: await readFile(join(dir, 'orders.csv.result.json'), 'utf8') };
}

describe('ReportSpool on a failing disk', () => {
  const inputs = ['child.mjs', 'orders.csv', 'orders.csv.result.json'];

  it('a spool write that fails fails the report write, removes the spool and leaves the earlier report', async () => {
    requireDist();
    // About 300 bytes a job: 1,000 jobs are past the 100 KB limit.
    const out = await underFileSizeLimit(200, 1000, 1000);
    expect(out).toEqual({ spooled: 'EFBIG', json: 'EFBIG', before: inputs, after: inputs, earlier: 'earlier' });
  });

  it('a side file write that fails fails the report write, removes every spool file and leaves the earlier report', async () => {
    requireDist();
    // 1,000 jobs end ahead of job 0, all but 8 set aside: past the 100 KB limit.
    const out = await underFileSizeLimit(200, 1001, 1000, 8);
    expect(out).toEqual({ spooled: 'EFBIG', json: 'EFBIG', before: inputs, after: inputs, earlier: 'earlier' });
  });

  it('a result.json write that fails leaves no temporary file and the earlier report', async () => {
    requireDist();
    // The spool (1,000 jobs) fits in 400 KB; result.json (2,000) does not.
    const out = await underFileSizeLimit(800, 2000, 1000);
    expect(out.spooled).toBe('ok');
    expect(out.json).toBe('EFBIG');
    expect(out.before.filter((n) => !inputs.includes(n))).toHaveLength(2); // the spool's own two files
    expect(out).toMatchObject({ after: inputs, earlier: 'earlier' });
  });
});
