#!/usr/bin/env node
/**
 * `npm run bench:spool` — a run's report for --jobs small jobs (default 1,000,000; one pending
 * item each, as a submitted job's are), two ways, each in its own process, alternating:
 * - `held`: every JobResult kept in report.jobs until the end, result.json written by
 *   resultJsonChunks (what a run does today);
 * - `spool`: each job ended into a ReportSpool as it ends (out of order within blocks of 16),
 *   result.json assembled by writeSpooledJson.
 * Prints per run: the live heap (after a full GC, every 100,000 jobs and at the end; the spool's
 * per-job arrays are outside the heap, 2 bytes a job), the peak heap used without forcing GC,
 * peak RSS, the time to write result.json, the whole time, and the file's size and SHA-256
 * (the same for both ways, or the benchmark fails). Then the spread of each figure.
 * Options: --jobs N, --runs N (pairs, default 3), --keep (leave the folder), --items N (items per
 * job, default 1), --held-back (job 0 ends last, every other job ahead of it, their items built as
 * a run's are when a job ends: prints the live heap just before it ends, and the spool's side file).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endOfOptions, flag, load, median, option, spread } from './lib/measure.mjs';
import { peakRssBytes } from './lib/peak-rss.mjs';

const DIST = new URL('../dist/report/', import.meta.url);
const mb = (bytes) => `${(bytes / 1048576).toFixed(1)} MB`;
const ms = (n) => `${Math.round(n)} ms`;

if (process.argv[2] === '--child')
  await child(process.argv[3], Number(process.argv[4]), process.argv[5], {
    items: Number(process.argv[6]),
    heldBack: process.argv[7] === 'held-back',
  });
else await parent();

async function parent() {
  const jobs = Number(option('--jobs', 'BENCH_JOBS', 1_000_000));
  const runs = Number(option('--runs', 'BENCH_RUNS', 3));
  const items = Number(option('--items', 'BENCH_ITEMS', 1));
  const heldBack = flag('--held-back');
  const keep = flag('--keep');
  endOfOptions();
  const dir = await mkdtemp(join(tmpdir(), 'htorder-bench-spool-'));
  const results = { held: [], spool: [] };
  try {
    for (let r = 0; r < runs; r++) {
      for (const mode of r % 2 === 0 ? ['held', 'spool'] : ['spool', 'held']) {
        const me = fileURLToPath(import.meta.url);
        const args = [me, '--child', mode, String(jobs), dir, String(items), heldBack ? 'held-back' : 'in-order'];
        const out = spawnSync(process.execPath, ['--expose-gc', ...args], {
          encoding: 'utf8',
        });
        if (out.status !== 0) throw new Error(`${mode} failed: ${out.stderr}`);
        const m = JSON.parse(out.stdout);
        results[mode].push(m);
        console.log(
          `${mode.padEnd(5)} ${jobs} jobs: live heap ${mb(m.liveHeap)}, peak heap ${mb(m.peakHeap)}, peak RSS ${mb(m.maxRss)}; ` +
            `result.json (${mb(m.size)}) written in ${ms(m.writeMs)}, all ${ms(m.totalMs)} (${load()})`,
        );
        if (heldBack)
          console.log(
            `      ${jobs - 1} jobs ended ahead of job 0: live heap ${mb(m.heldBackHeap)} before it ends` +
              (mode === 'spool' ? `; side file ${mb(m.asideBytes)}` : ''),
          );
      }
    }
  } finally {
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
  const hashes = new Set([...results.held, ...results.spool].map((m) => m.sha256));
  for (const mode of ['held', 'spool']) {
    const rs = results[mode];
    console.log(
      `${mode}: live heap ${spread(
        rs.map((m) => m.liveHeap),
        mb,
      )}; peak RSS ${spread(
        rs.map((m) => m.maxRss),
        mb,
      )}; write ${spread(
        rs.map((m) => m.writeMs),
        ms,
      )}; all ${spread(
        rs.map((m) => m.totalMs),
        ms,
      )}`,
    );
  }
  const ratio = median(results.spool.map((m) => m.writeMs)) / median(results.held.map((m) => m.writeMs));
  console.log(`result.json write, spool ÷ held (medians): ${ratio.toFixed(2)}×`);
  if (hashes.size !== 1) throw new Error(`result.json differs between the two ways: ${[...hashes].join(', ')}`);
  console.log('result.json byte-identical both ways');
}

async function child(mode, n, dir, { items, heldBack }) {
  const { itemDeferrer } = await import(new URL('lazy-items.js', DIST).href);
  const { emptySummary, refreshSummary } = await import(new URL('build-report.js', DIST).href);
  const { writeResultJson } = await import(new URL('write-result-json.js', DIST).href);
  const { ReportSpool, writeSpooledJson } = await import(new URL('report-spool.js', DIST).href);
  const input = join(dir, 'orders.csv');
  const paths = { json: `${input}.${mode}.result.json`, errors: `${input}.${mode}.errors.txt` };
  const defer = itemDeferrer(
    {
      count: () => items,
      build: (j, k, status) => ({
        index: k,
        source: { row: j + 2 },
        itemType: 'Asset',
        code: 'A10001',
        quantity: 5,
        status,
        newAssetSku: null,
        needsArtworkToBeUploaded: null,
        errors: [],
      }),
    },
    n,
  );
  const NONE = Object.freeze([]);
  const deferred = (index) =>
    defer({
      index,
      orderNumber: `PO-${index}`,
      status: 'submitted',
      source: { row: index + 2 },
      jobNumber: 100000 + index,
      dateDue: '2026-12-04',
      totalJobCost: 12.5,
      estimatedCost: 12.5,
      currency: 'USD',
      warnings: NONE,
      errors: NONE,
    });
  const job = (index) => {
    const result = deferred(index);
    // A run builds an ended job's items (JobReporter.end).
    if (heldBack) void result.items;
    return result;
  };
  const order = heldBack ? heldBackOrder : endOrder;
  let heldBackHeap = 0;
  const beforeLast = (ended) => {
    if (!heldBack || ended !== n - 1) return;
    globalThis.gc();
    heldBackHeap = process.memoryUsage().heapUsed;
  };
  const head = {
    reportVersion: 1,
    command: 'run',
    htorderVersion: '0.1.0',
    input: { file: input, sha256: null, format: 'csv' },
    startedAt: '2026-03-01T10:00:00.000Z',
    finishedAt: '2026-03-01T11:00:00.000Z',
    summary: emptySummary(),
    errors: [],
    warnings: [],
  };
  let liveHeap = 0;
  let peakHeap = 0;
  const sample = (full) => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    if (!full) return;
    globalThis.gc();
    liveHeap = Math.max(liveHeap, process.memoryUsage().heapUsed);
  };
  // The jobs end between other work (each block of 1,024 gives the event loop a turn).
  const started = performance.now();
  let writeMs;
  let asideBytes = 0;
  if (mode === 'held') {
    const jobs = new Array(n);
    let ended = 0;
    for (const i of order(n)) {
      beforeLast(ended);
      jobs[i] = job(i);
      if (++ended % 1024 === 0) await new Promise(setImmediate);
      if (ended % 100_000 === 0) sample(true);
    }
    sample(true);
    const report = refreshSummary({ ...head, jobs });
    const t = performance.now();
    await writeResultJson(paths.json, report);
    writeMs = performance.now() - t;
  } else {
    const spool = await ReportSpool.create(paths, n, input);
    let ended = 0;
    for (const i of order(n)) {
      if (heldBack && ended === n - 1) {
        await spool.flushed();
        asideBytes = await asideSize(dir, paths.json);
      }
      beforeLast(ended);
      // As a run would: a turn of the event loop now and then, a wait when the disk is behind.
      const more = spool.end(i, job(i));
      ended++;
      if (!more) await spool.flushed();
      else if (ended % 1024 === 0) await new Promise(setImmediate);
      if (ended % 100_000 === 0) sample(true);
    }
    await spool.flushed();
    sample(true);
    const t = performance.now();
    await writeSpooledJson(paths.json, head, spool, () => {
      throw new Error('every job has ended');
    });
    writeMs = performance.now() - t;
    await spool.close();
  }
  sample(false);
  const totalMs = performance.now() - started;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(paths.json)) hash.update(chunk);
  const { size } = await stat(paths.json);
  await rm(paths.json);
  const maxRss = peakRssBytes();
  const sha256 = hash.digest('hex');
  console.log(JSON.stringify({ liveHeap, peakHeap, maxRss, writeMs, totalMs, size, sha256, heldBackHeap, asideBytes }));
}

/** 1 … n-1 as endOrder gives them, then job 0: one job held back while every other ends. */
function* heldBackOrder(n) {
  for (const i of endOrder(n)) if (i !== 0) yield i;
  yield 0;
}

/** Bytes of the spool's temporary files beside result.json past its own two (the side file), 0 when none. */
async function asideSize(dir, json) {
  const { readdir } = await import('node:fs/promises');
  const prefix = `.${json.slice(dir.length + 1)}.`;
  const names = (await readdir(dir)).filter((name) => name.startsWith(prefix) && name.endsWith('.tmp'));
  const sizes = await Promise.all(names.map(async (name) => (await stat(join(dir, name))).size));
  // result.json's spool is empty while job 0 runs: the largest file is the side file, if any.
  return names.length > 1 ? Math.max(...sizes) : 0;
}

/** 0 … n-1, each block of 16 shuffled (a fixed seed): jobs end out of order within a window. */
function* endOrder(n) {
  let seed = 42;
  const rand = (k) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % k;
  };
  for (let from = 0; from < n; from += 16) {
    const block = [];
    for (let i = from; i < Math.min(n, from + 16); i++) block.push(i);
    for (let i = block.length - 1; i > 0; i--) {
      const j = rand(i + 1);
      [block[i], block[j]] = [block[j], block[i]];
    }
    yield* block;
  }
}
