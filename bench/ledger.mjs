#!/usr/bin/env node
/**
 * `npm run bench:ledger` — what a folder ledger of 1,000,000 orders costs a run, and on disk.
 *
 * Two state dirs, each vouched for the sandbox's account by a warm-up run (not timed). One is
 * then filled, directly (the files FolderLedger.write makes, written plainly,
 * --fill-concurrency at a time), with --orders orders (1,000,000) of --per-day a day (10,000) up to yesterday,
 * each a copy of an entry the warm-up wrote (another order number, job number and date): the
 * orders of the last --retention days (90, the default ledgerRetention) as the entries a run
 * writes, the older ones in their shards' compact index as the daily upkeep leaves them. The
 * other stays as the warm-up left it (a few hundred orders).
 *
 * Then --runs (3) pairs of `htorder run` of a YAML manifest of --jobs jobs (1,000) × 5 reorder
 * lines, as `npm run bench` sends them (--latency ms a call, 25; concurrency 8), one on each
 * state dir, alternating which goes first, the sandbox reset before each. Prints each pair's
 * wall times and their ratio (goal: filled ≤ 1.05× empty), the state dir's files and bytes
 * per 1,000 orders (what a run adds per 1,000 jobs: entries and content notes; what a folded
 * order keeps), and how long the daily upkeep's scan of the filled ledger takes in-process
 * (FolderLedger.compact folding nothing new: it reads every live entry).
 *
 * Options: --orders N, --per-day N, --retention DAYS, --runs N, --jobs N, --latency MS,
 * --fill-concurrency N. Environment: BENCH_LEDGER_ORDERS, BENCH_RUNS, BENCH_JOBS, BENCH_LATENCY_MS.
 */
import { spawnSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/index.js';
import { writeFileAtomic } from '../dist/storage/atomic-write.js';
import { foldOf, foldText } from '../dist/storage/ledger/folder-fold.js';
import { FOLDED, LAYOUT, orderShard } from '../dist/storage/ledger/folder-layout.js';
import { FolderLedger } from '../dist/storage/ledger/folder-ledger.js';
import { demoRunEnv, orderableAssets } from './lib/demo-account.mjs';
import { endOfOptions, load, measureProcess, median, option, seconds, spread, times } from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const ORDERS_N = Number(option('--orders', 'BENCH_LEDGER_ORDERS', 1_000_000));
const PER_DAY = Number(option('--per-day', 'BENCH_LEDGER_PER_DAY', 10_000));
const RETENTION_DAYS = Number(option('--retention', 'BENCH_LEDGER_RETENTION_DAYS', 90));
const RUNS = Number(option('--runs', 'BENCH_RUNS', 3));
const JOBS = Number(option('--jobs', 'BENCH_JOBS', 1000));
const LATENCY = Number(option('--latency', 'BENCH_LATENCY_MS', 25));
const FILL_CONCURRENCY = Number(option('--fill-concurrency', 'BENCH_LEDGER_FILL_CONCURRENCY', 32));
const CONCURRENCY = 8;
const LINES = 5;
const DAY_MS = 86_400_000;
// --cli: another build of htorder to measure (before/after).
const CLI = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
endOfOptions();

const sandbox = await startSandbox({ port: 0 });
const work = await mkdtemp(join(tmpdir(), 'htorder-bench-ledger-'));
const stats = join(work, 'stats.json');
try {
  const assets = await orderableAssets(sandbox, LINES);
  const env = demoRunEnv(sandbox, CONCURRENCY);
  const filled = join(work, 'filled');
  const empty = join(work, 'empty');
  const htorder = async (tag, stateDir) => {
    const file = join(work, `orders-${tag}.yaml`);
    await writeFile(file, manifest(tag, assets));
    await sandbox.admin.reset();
    await sandbox.admin.setFaults([{ route: '*', kind: 'latency', latencyMs: LATENCY }]);
    const r = await measureProcess([CLI, 'run', file], {
      statsFile: stats,
      env: { ...env, HTORDER_STATE_DIR: stateDir },
      cwd: work,
    });
    const created = (await sandbox.admin.jobs()).length;
    if (r.code !== 0 || created !== JOBS)
      throw new Error(
        `htorder run exited ${r.code} with ${created} of ${JOBS} jobs created:\n${r.stderr.slice(0, 2000)}`,
      );
    return { ...r, calls: await sandbox.admin.calls() };
  };

  console.log(
    `htorder run on a folder ledger of ${ORDERS_N.toLocaleString('en')} orders vs an empty one: ${JOBS.toLocaleString('en')} jobs × ${LINES} reorder lines, ${LATENCY} ms per call, concurrency ${CONCURRENCY}`,
  );
  await htorder('WF', filled);
  const before = await usage(empty);
  await htorder('WE', empty);
  const afterOne = await usage(empty);
  const account = await accountOf(filled);
  const ledger = new FolderLedger(filled);
  const sample = await sampleEntry(ledger, account);

  const started = performance.now();
  const fill = await fillLedger(ledger, account, sample);
  console.log(
    `  fill: ${fill.live.toLocaleString('en')} live entries (the last ${RETENTION_DAYS} days at ${PER_DAY.toLocaleString('en')} a day) and ${fill.folded.toLocaleString('en')} folded orders in ${seconds(performance.now() - started)}`,
  );
  // The fill's dirty pages written out now, not during the first timed run.
  spawnSync('sync');
  const full = await usage(filled);
  console.log(
    `  filled state dir: ${full.files.toLocaleString('en')} files, ${mb(full.bytes)} (${mb(full.blocks)} on disk); per 1,000 orders: ${perThousand(full.files, ORDERS_N)} files, ${kb((full.bytes * 1000) / ORDERS_N)}`,
  );
  console.log(
    `  per 1,000 live orders (what a run adds per 1,000 jobs: entries, content notes, locks): ${perThousand(afterOne.files - before.files, JOBS)} files, ${kb(((afterOne.bytes - before.bytes) * 1000) / JOBS)}; per 1,000 folded orders: ${kb(fill.foldedBytes / (fill.folded / 1000))} in ${fill.shards.toLocaleString('en')} index files`,
  );

  const ratios = [];
  const cpuRatios = [];
  const filledMs = [];
  const emptyMs = [];
  for (let run = 1; run <= RUNS; run++) {
    const first = run % 2 === 1;
    const a = first ? await htorder(`F${run}`, filled) : undefined;
    const b = await htorder(`E${run}`, empty);
    const f = a ?? (await htorder(`F${run}`, filled));
    ratios.push(f.wallMs / b.wallMs);
    cpuRatios.push(f.cpuMs / b.cpuMs);
    filledMs.push(f.wallMs);
    emptyMs.push(b.wallMs);
    console.log(
      `  run ${run} (${first ? 'filled first' : 'empty first'}): filled ${seconds(f.wallMs)} (CPU ${seconds(f.cpuMs)}) · empty ${seconds(b.wallMs)} (CPU ${seconds(b.cpuMs)}) · ${times(f.wallMs / b.wallMs)} · ${load()}`,
    );
  }
  const record = await ledger.readAccount(account);
  if (record?.otherWriter)
    console.log(`  NOTE: the filled ledger saw another writer (${JSON.stringify(record.otherWriter)})`);
  console.log(
    `  filled ÷ empty: ${spread(ratios, times)}; medians ${seconds(median(filledMs))} vs ${seconds(median(emptyMs))}`,
  );
  console.log(`  filled ÷ empty, CPU time: ${spread(cpuRatios, times)}`);
  console.log(`  goal: filled ≤ 1.05× empty … met in ${ratios.filter((r) => r <= 1.05).length} of ${RUNS} runs`);

  const scan = performance.now();
  const compacted = await ledger.compact(account, { foldBefore: Date.now() - RETENTION_DAYS * DAY_MS, notes: [] });
  console.log(
    `  the daily upkeep's scan of the filled ledger (compact, in-process): ${seconds(performance.now() - scan)}, folded ${compacted.folded}`,
  );
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await sandbox.close();
  await rm(work, { recursive: true, force: true });
}

/** The one account folder's key (its `.layout`). */
async function accountOf(stateDir) {
  const dirs = (await readdir(join(stateDir, 'ledger'), { withFileTypes: true })).filter((d) => d.isDirectory());
  if (dirs.length !== 1) throw new Error(`expected one account in ${stateDir}, found ${dirs.length}`);
  return JSON.parse(await readFile(join(stateDir, 'ledger', dirs[0].name, LAYOUT), 'utf8')).account;
}

/** A submitted entry the warm-up wrote, to copy. */
async function sampleEntry(ledger, account) {
  for await (const entry of ledger.entries(account)) if (entry.state === 'submitted') return entry;
  throw new Error('the warm-up wrote no submitted entry');
}

/**
 * ORDERS_N orders, PER_DAY a day ending yesterday: the newest RETENTION_DAYS days written as
 * entries through the store, the rest into each shard's compact index (one write per shard).
 */
async function fillLedger(ledger, account, sample) {
  const now = Date.now();
  const liveN = Math.min(ORDERS_N, PER_DAY * RETENTION_DAYS);
  const entryOf = (i) => {
    const at = new Date(now - DAY_MS * (1 + Math.floor(i / PER_DAY)) + (i % PER_DAY)).toISOString();
    return {
      ...sample,
      orderNumber: `FILL-${String(i).padStart(7, '0')}`,
      jobNumber: 10_000_000 + i,
      intentAt: at,
      outcomeAt: at,
    };
  };
  // The first entry through the store makes the account's folders; the rest are the files it
  // writes (its paths, its text), written plainly rather than atomically: fast.
  await ledger.write(entryOf(0), { guard: null, durable: false });
  const made = new Map();
  let next = 1;
  const worker = async () => {
    while (next < liveN) {
      const entry = entryOf(next++);
      const path = ledger.pathOf(entry);
      const dir = dirname(path);
      if (!made.has(dir)) made.set(dir, mkdir(dir, { recursive: true }));
      await made.get(dir);
      await writeFile(path, `${JSON.stringify(entry, null, 2)}\n`);
    }
  };
  await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));

  const shards = new Map();
  for (let i = liveN; i < ORDERS_N; i++) {
    const entry = entryOf(i);
    const shard = orderShard(entry.orderNumber);
    if (!shards.has(shard)) shards.set(shard, []);
    shards.get(shard).push(foldOf(entry));
  }
  const dir = dirname(dirname(ledger.pathOf({ account, orderNumber: 'any' })));
  let foldedBytes = 0;
  for (const [shard, list] of shards) {
    const text = foldText(list);
    foldedBytes += Buffer.byteLength(text);
    await mkdir(join(dir, shard), { recursive: true });
    await writeFileAtomic(join(dir, shard, FOLDED), text, { durable: false });
  }
  return { live: liveN, folded: ORDERS_N - liveN, foldedBytes, shards: shards.size };
}

/** Files and bytes (and allocated blocks) under `dir`. */
async function usage(dir) {
  let files = 0;
  let bytes = 0;
  let blocks = 0;
  const walk = async (d) => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else {
        const s = await lstat(p);
        files++;
        bytes += s.size;
        blocks += s.blocks * 512;
      }
    }
  };
  await walk(dir);
  return { files, bytes, blocks };
}

function perThousand(n, of) {
  return ((n * 1000) / of).toFixed(0);
}
function mb(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** JOBS jobs of LINES asset reorders, one delivery address named after the run (as bench/pipeline.mjs). */
function manifest(tag, assets) {
  const out = [
    'version: 1',
    'defaults:',
    '  deliveryAddress:',
    '    deliveryMethod: UPS Ground',
    `    contactName: Ana Ruiz ${tag}`,
    '    streetAddress: 1 Main St',
    '    city: Austin',
    '    state: Texas',
    '    postalCode: "78701"',
    '    country: United States',
    'jobs:',
  ];
  for (let j = 1; j <= JOBS; j++) {
    out.push(
      `  - orderNumber: ${tag}-${String(j).padStart(6, '0')}`,
      `    description: Bench reorder ${j}`,
      '    items:',
    );
    for (let k = 0; k < LINES; k++)
      out.push(
        `      - { itemType: Asset, code: ${assets[(j + k) % assets.length]}, quantity: ${50 + ((j + k) % 5) * 10} }`,
      );
  }
  return `${out.join('\n')}\n`;
}
