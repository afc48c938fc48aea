#!/usr/bin/env node
/**
 * `npm run bench:check` — `htorder check` of a big default-template CSV against the floor a user
 * would compare it with: a bare csv-parse process (`fs.createReadStream(file).pipe(parse())`,
 * csv-parse's default options, counting records). Both are timed the same way, as whole
 * processes from spawn to exit (start-up included), side by side and alternating (odd runs
 * check first, even runs csv-parse first), so a busy neighbour slows both. Prints every run's
 * ratio and peak RSS, then the spread (min–max, median) and the goals:
 * check ≤ 1.3× bare csv-parse, peak RSS ≤ 400 MB. The ratios of CPU time (user + system) are
 * printed too, of the whole process and of its main thread alone: on a busy machine they are
 * what still measures check rather than its neighbours (the goal is also counted by the main
 * thread's ratio, the stand-in for a quiet machine's wall time).
 *
 * Sizes: --rows (default 1,000,000) and --small-rows (default 300,000; 0 skips), 19 columns,
 * 5 rows per order, the address on each order's first row (lib/generate-csv.mjs). --invalid K:
 * every line of one order in K (1: every order) has a quantity check refuses (`x`), so check
 * exits 1 and writes errors.txt: the same goals, its peak RSS above all (a finding a line).
 *
 * Then the mapped benchmark: a Shopify-shaped export of --mapped-rows rows (default
 * 100,000; 0 skips) through `check --mapping shopify` against the same lines in the default
 * template, judged on CPU time (goal ≤ 3×).
 *
 * Then recognition: each recognised sample (samples/ and the shop-variant fixtures) checked with
 * no mapping against the same file with `--mapping PRESET`, median of --runs (goal: within
 * 0.15 s). `--rows 0 --small-rows 0 --mapped-rows 0` runs it alone; `--recognition 0` skips it.
 *
 * Options: --runs N (default 5), --rows N, --small-rows N, --mapped-rows N, --invalid K, --keep (leave the
 * files in place), --prof DIR (a --cpu-prof profile of every check into DIR), --cli FILE (another
 * build's dist/cli/main.js), --base FILE (a second build timed in the same runs, in turn with
 * --cli's, against the same csv-parse run: before/after on a busy machine). Each check that
 * starts the result.csv worker also shows the worker's own time and CPU time.
 * Environment: BENCH_RUNS, BENCH_ROWS, BENCH_SMALL_ROWS, BENCH_MAPPED_ROWS, BENCH_INVALID, BENCH_BASE.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCsv } from './lib/generate-csv.mjs';
import { generateShopify } from './lib/generate-shopify.mjs';
import {
  endOfOptions,
  flag,
  load,
  measureProcess,
  median,
  megabytes,
  option,
  seconds,
  spread,
  times,
} from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(option('--runs', 'BENCH_RUNS', 5));
const sizes = [
  Number(option('--rows', 'BENCH_ROWS', 1_000_000)),
  Number(option('--small-rows', 'BENCH_SMALL_ROWS', 300_000)),
];
const mappedRows = Number(option('--mapped-rows', 'BENCH_MAPPED_ROWS', 100_000));
// --invalid K: one order in K (1: every one) with every line's quantity `x` (lib/generate-csv.mjs).
const invalidEvery = Number(option('--invalid', 'BENCH_INVALID', 0));
if (!Number.isSafeInteger(invalidEvery) || invalidEvery < 0) throw new Error('--invalid: 0 or a positive number');
const recognition = Number(option('--recognition', 'BENCH_RECOGNITION', 1));
const prof = option('--prof', 'BENCH_PROF', undefined);
const keep = flag('--keep');
const MB = 1024 * 1024;
// --cli: another build of htorder to measure (e.g. an older one, for before/after).
const CLI = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
// --base: a second build (e.g. main's dist/cli/main.js), timed in the same runs as --cli, in turn with it.
const BASE = option('--base', 'BENCH_BASE', undefined);
endOfOptions();
const BARE = join(root, 'bench/lib/bare-parse.mjs');
const nodeArgs = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];

const dir = await mkdtemp(join(tmpdir(), 'htorder-bench-'));
const stats = join(dir, 'stats.json');
const checkOpts = { statsFile: stats, cwd: root, nodeArgs };
try {
  for (const rows of sizes.filter((n) => n > 0)) await checkVsBare(rows);
  if (mappedRows > 0) await mapped();
  if (recognition > 0) await recognised();
} finally {
  if (keep) console.log(`kept ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}

/** Wall time less the main thread's waits for a core: about what a quiet machine would show. */
function unqueued(m) {
  return m.wallMs - m.mainThreadQueuedMs;
}

async function checkVsBare(rows) {
  const file = join(dir, `orders-${rows}.csv`);
  const gen = await generateCsv(file, rows, 1, { invalidEvery });
  const invalid =
    invalidEvery === 0
      ? ''
      : `, every line's quantity "x" in ${invalidEvery === 1 ? 'every order' : `one order in ${invalidEvery}`}`;
  console.log(
    `\nhtorder check vs bare csv-parse: ${gen.rows.toLocaleString('en')} rows, ${gen.jobs.toLocaleString('en')} orders, ${(gen.bytes / MB).toFixed(1)} MB${invalid} (${file})`,
  );
  // --base: the same runs also time another build, in turn with this one, against the same csv-parse run.
  const builds = [{ name: 'check', cli: CLI }, ...(BASE ? [{ name: 'base', cli: BASE }] : [])];
  const bare = () => measureProcess([BARE, file], { statsFile: stats, cwd: root });
  const figures = builds.map(() => ({
    ratios: [],
    unqueuedRatios: [],
    cpuRatios: [],
    mainRatios: [],
    rss: [],
    worker: [],
  }));
  for (let run = 1; run <= runs; run++) {
    // Odd runs check first, even runs csv-parse first (and the builds in turn), so a busy neighbour slows all.
    const order = run % 2 ? [...builds.keys(), -1] : [-1, ...[...builds.keys()].reverse()];
    const m = new Map();
    for (const k of order) {
      const r = k < 0 ? await bare() : await measureProcess([builds[k].cli, 'check', file], checkOpts);
      const expected = invalidEvery === 0 ? 0 : 1;
      if (k >= 0 && (r.code !== expected || (expected === 1 && !r.stderr.includes(' invalid, '))))
        throw new Error(`check exited ${r.code} (expected ${expected}):\n${r.stderr.slice(0, 2000)}`);
      m.set(k, r);
    }
    const b = m.get(-1);
    if (b.code !== 0) throw new Error(`bare csv-parse failed:\n${b.stderr}`);
    const records = JSON.parse(b.stdout).records;
    if (records !== rows + 1) throw new Error(`bare csv-parse counted ${records} records, expected ${rows + 1}`);
    const parts = builds.map(({ name }, k) => {
      const c = m.get(k);
      const f = figures[k];
      f.ratios.push(c.wallMs / b.wallMs);
      f.unqueuedRatios.push(unqueued(c) / unqueued(b));
      f.cpuRatios.push(c.cpuMs / b.cpuMs);
      f.mainRatios.push(c.mainThreadMs / b.mainThreadMs);
      f.rss.push(c.maxRssBytes);
      const worker =
        c.workerCpuMs === undefined ? '' : `, worker ${seconds(c.workerWallMs)} (CPU ${seconds(c.workerCpuMs)})`;
      if (c.workerCpuMs !== undefined) f.worker.push(c);
      return `${name} ${seconds(c.wallMs)} (CPU ${seconds(c.cpuMs)}, main thread ${seconds(c.mainThreadMs)}${worker}, peak RSS ${megabytes(c.maxRssBytes)}) · ${times(c.wallMs / b.wallMs)}, unqueued ${times(unqueued(c) / unqueued(b))}, CPU ${times(c.cpuMs / b.cpuMs)}, main thread ${times(c.mainThreadMs / b.mainThreadMs)}`;
    });
    console.log(
      `  run ${run} (${run % 2 ? 'check first' : 'csv-parse first'}): ${parts.join(' · ')} · csv-parse ${seconds(b.wallMs)} (CPU ${seconds(b.cpuMs)}, main thread ${seconds(b.mainThreadMs)}, ${megabytes(b.maxRssBytes)}) · ${load()}`,
    );
  }
  for (const [k, { name }] of builds.entries()) summary(name, figures[k]);
}

function summary(name, { ratios, unqueuedRatios, cpuRatios, mainRatios, rss, worker }) {
  const GOAL = 1.3;
  const timeOk = ratios.filter((r) => r <= GOAL).length;
  const mainOk = mainRatios.filter((r) => r <= GOAL).length;
  const rssOk = rss.filter((r) => r <= 400 * MB).length;
  const unqueuedOk = unqueuedRatios.filter((r) => r <= GOAL).length;
  console.log(`  ${name}: ratio ${spread(ratios, times)}; peak RSS ${spread(rss, megabytes)}`);
  // Wall time less the main thread's waits for a core (schedstat): the load's share taken out,
  // the waits for the disk, the worker and the fsyncs kept in, which CPU time leaves out.
  console.log(
    `  ${name}: ratio of wall time less the main thread's waits for a core: ${spread(unqueuedRatios, times)}`,
  );
  // CPU time as well: on a busy machine wall time measures the neighbours (the goal is wall time).
  // The whole process's CPU time counts the result.csv worker and V8's helper threads, which a
  // quiet machine runs on its other core; the main thread's is the steadiest stand-in for the
  // wall time a quiet machine shows.
  console.log(
    `  ${name}: CPU-time ratio: whole process ${spread(cpuRatios, times)}; main thread ${spread(mainRatios, times)}`,
  );
  // The result.csv worker's own life and CPU time: what it costs beside the main thread.
  if (worker.length > 0)
    console.log(
      `  ${name}: result.csv worker: ${spread(
        worker.map((c) => c.workerWallMs),
        seconds,
      )} from its start to its exit, CPU ${spread(
        worker.map((c) => c.workerCpuMs),
        seconds,
      )}`,
    );
  console.log(
    `  ${name}: goal: check ≤ ${GOAL}× bare csv-parse … met in ${timeOk} of ${runs} runs (wall), ${unqueuedOk} of ${runs} (wall less waits for a core), ${mainOk} of ${runs} (main thread's CPU)`,
  );
  console.log(`  ${name}: goal: peak RSS ≤ 400 MB ……………… met in ${rssOk} of ${runs} runs`);
}

async function mapped() {
  // The same lines as a Shopify export and in the default template.
  const shopify = join(dir, 'orders_export.csv');
  const template = join(dir, 'orders_template.csv');
  const gen = await generateShopify(shopify, template, mappedRows);
  console.log(
    `\nmapped: check --mapping shopify vs check of the same lines in the default template: ${gen.rows.toLocaleString('en')} rows, ${gen.orders.toLocaleString('en')} orders (Shopify export, 79 columns)`,
  );
  // CPU time (user + system) as well as wall time: on a busy machine the wall clock measures the
  // neighbours; the goal is judged on CPU time, which is what the export costs.
  const ratios = [];
  for (let run = 1; run <= runs; run++) {
    const m = await measureProcess([CLI, 'check', '--mapping', 'shopify', shopify], { statsFile: stats, cwd: root });
    if (m.code !== 0) throw new Error(`mapped check exited ${m.code}:\n${m.stderr.slice(0, 2000)}`);
    const p = await measureProcess([CLI, 'check', template], { statsFile: stats, cwd: root });
    if (p.code !== 0) throw new Error(`template check exited ${p.code}:\n${p.stderr.slice(0, 2000)}`);
    const ratio = m.cpuMs / p.cpuMs;
    ratios.push(ratio);
    console.log(
      `  run ${run}: mapped ${seconds(m.cpuMs)} CPU (${seconds(m.wallMs)} wall) · template ${seconds(p.cpuMs)} CPU (${seconds(p.wallMs)} wall) · ${times(ratio)} · ${load()}`,
    );
  }
  const ok = ratios.filter((r) => r <= 3).length;
  console.log(`  ratio (CPU) ${spread(ratios, times)}`);
  console.log(`  goal: mapped ≤ 3× template (CPU) … met in ${ok} of ${runs} runs`);
}

/** A recognised export costs its header's read and the presets' signatures over the same file given --mapping. */
async function recognised() {
  const samples = [
    ['shopify', 'samples/shopify/orders_export.csv'],
    ['woocommerce', 'samples/woocommerce-webtoffee/order-export.csv'],
    ['odoo', 'samples/odoo/sale.order.csv'],
    ['odoo', 'test/presets/fixtures/odoo-import-compatible.csv'],
    ['wix', 'test/presets/fixtures/wix-iso-codes.csv'],
    ['etsy', 'samples/etsy/EtsySoldOrderItems2026-11.csv'],
  ];
  console.log(`\nrecognition: check FILE vs check --mapping PRESET FILE, median of ${runs} (goal: within 0.15 s)`);
  for (const [preset, sample] of samples) {
    const file = join(dir, sample.split('/').pop());
    await copyFile(join(root, sample), file);
    const plain = { wall: [], cpu: [] };
    const given = { wall: [], cpu: [] };
    for (let run = 1; run <= runs; run++) {
      // Alternating, so that a busy neighbour slows both.
      for (const [args, into] of [
        [[CLI, 'check', file], plain],
        [[CLI, 'check', '--mapping', preset, file], given],
      ]) {
        const m = await measureProcess(args, { statsFile: stats, cwd: root, nodeArgs });
        into.wall.push(m.wallMs);
        into.cpu.push(m.cpuMs);
      }
    }
    const wall = median(plain.wall) - median(given.wall);
    const cpu = median(plain.cpu) - median(given.cpu);
    console.log(
      `  ${sample}: +${seconds(wall)} wall (${seconds(median(plain.wall))} vs ${seconds(median(given.wall))}), +${seconds(cpu)} CPU · ${load()}`,
    );
  }
}
