#!/usr/bin/env node
/**
 * `npm run bench:job-index` — a template CSV's job index (manifest/csv/job-index.ts) against the
 * whole read (readCsvDocument + buildManifest) of the same file, each in a process of its own:
 * - the index: its time, then (after a garbage collection) the heap used, the memory outside it
 *   (typed arrays) and RSS, the index's own tables; then every job read back in windows of
 *   --window jobs (default 256), timed, with the process's peak RSS;
 * - the whole read: its time and peak RSS (--whole 0 skips it: at 1,000,000 jobs it needs
 *   several GB).
 * The file: --jobs N orders of 5 rows (default 100,000), written by lib/generate-csv.mjs into
 * --dir (default a new folder in the system's temporary folder), deleted afterwards unless --keep.
 * --scatter 1: every order's rows far apart (all first rows, then all second rows, …); --scatter 2:
 * the rows in random order, the worst case for reading a window back (the file is rewritten in
 * memory: 100,000 jobs or so).
 * Goals: the index of 1,000,000 jobs within 80 MB of heap, reading every job back within the
 * whole read's time. Jobs, items and SHA-256 of both are compared.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCsv, ROWS_PER_ORDER, rng } from './lib/generate-csv.mjs';
import { endOfOptions, flag, load, measureProcess, megabytes, option, seconds, times } from './lib/measure.mjs';
import { peakRssBytes } from './lib/peak-rss.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const MB = 1024 * 1024;

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4], Number(process.argv[5]));
else await main();

async function main() {
  const jobs = Number(option('--jobs', 'BENCH_JOBS', 100_000));
  const window = Number(option('--window', 'BENCH_WINDOW', 256));
  const whole = Number(option('--whole', 'BENCH_WHOLE', 1)) > 0;
  const scatter = Number(option('--scatter', 'BENCH_SCATTER', 0));
  const keep = flag('--keep');
  const given = option('--dir', 'BENCH_DIR', undefined);
  endOfOptions();
  if (given !== undefined) await mkdir(given, { recursive: true });
  const dir = given ?? (await mkdtemp(join(tmpdir(), 'htorder-bench-')));
  const file = join(dir, `orders-${jobs}.csv`);
  const stats = join(dir, `stats-${jobs}.json`);
  try {
    const gen = await generateCsv(file, jobs * ROWS_PER_ORDER);
    if (scatter > 0) await scatterRows(file, scatter);
    console.log(
      `job index: ${gen.jobs.toLocaleString('en')} jobs, ${gen.rows.toLocaleString('en')} rows, ${(gen.bytes / MB).toFixed(0)} MB (${file})`,
    );
    const self = fileURLToPath(import.meta.url);
    const run = async (mode, nodeArgs) => {
      const m = await measureProcess([self, '--child', mode, file, String(window)], {
        statsFile: stats,
        cwd: root,
        nodeArgs,
      });
      if (m.code !== 0) throw new Error(`${mode} exited ${m.code}:\n${m.stderr.slice(0, 2000)}`);
      return { ...m, out: JSON.parse(m.stdout) };
    };
    const index = await run('index', ['--expose-gc']);
    const i = index.out;
    console.log(`  index: ${seconds(i.indexMs)}, peak RSS while indexing ${megabytes(i.indexPeak)} · ${load()}`);
    console.log(
      `    after indexing (after a GC): heap used ${megabytes(i.heapUsed)}, outside the heap ${megabytes(i.external)} (array buffers ${megabytes(i.arrayBuffers)}), RSS ${megabytes(i.rss)}; the index's tables ${megabytes(i.tableBytes)}`,
    );
    console.log(
      `  read back in windows of ${window}: ${seconds(i.readMs)} (${i.jobs.toLocaleString('en')} jobs, ${i.items.toLocaleString('en')} items); heap used after ${megabytes(i.heapAfter)}; process peak RSS ${megabytes(index.maxRssBytes)}, CPU ${seconds(index.cpuMs)}`,
    );
    console.log(`  goal: index heap ≤ 80 MB … ${i.heapUsed <= 80 * MB ? 'met' : 'NOT met'}`);
    if (!whole) return;
    const w = await run('whole', ['--max-old-space-size=12288']);
    console.log(
      `  whole read: ${seconds(w.out.wholeMs)} (${w.out.jobs.toLocaleString('en')} jobs, ${w.out.items.toLocaleString('en')} items); peak RSS ${megabytes(w.maxRssBytes)}, CPU ${seconds(w.cpuMs)} · ${load()}`,
    );
    const same = w.out.jobs === i.jobs && w.out.items === i.items && w.out.sha256 === i.sha256;
    console.log(`  same jobs, items and SHA-256: ${same ? 'yes' : 'NO'}`);
    const ratio = i.readMs / w.out.wholeMs;
    console.log(`  goal: read back ≤ the whole read … ${times(ratio)}, ${ratio <= 1 ? 'met' : 'NOT met'}`);
  } finally {
    if (keep) console.log(`kept ${file}`);
    else await rm(given === undefined ? dir : file, { recursive: true, force: true });
    await rm(stats, { force: true });
  }
}

/** Rewrites `file` with each order's k-th row in the k-th fifth of the file (`how` 1), or every row anywhere (2). */
async function scatterRows(file, how) {
  const [header, ...rows] = (await readFile(file, 'utf8')).trimEnd().split('\n');
  let out;
  if (how === 1) {
    const parts = Array.from({ length: ROWS_PER_ORDER }, () => []);
    for (const [r, row] of rows.entries()) parts[r % ROWS_PER_ORDER].push(row);
    out = parts.flat();
  } else {
    const random = rng(7);
    out = rows
      .map((row) => [random(), row])
      .sort((a, b) => a[0] - b[0])
      .map(([, row]) => row);
  }
  await writeFile(file, `${[header, ...out].join('\n')}\n`);
  console.log(how === 1 ? '  (each order’s rows a fifth of the file apart)' : '  (the rows in random order)');
}

async function child(mode, file, window) {
  const dist = (path) => import(new URL(`../dist/manifest/${path}`, import.meta.url).href);
  if (mode === 'whole') {
    const { readCsvDocument } = await dist('csv/read-csv.js');
    const { buildManifest } = await dist('build-manifest.js');
    const started = performance.now();
    const raw = await readCsvDocument(file);
    const manifest = buildManifest(raw);
    const wholeMs = performance.now() - started;
    const items = manifest.jobs.reduce((n, j) => n + j.items.length, 0);
    console.log(JSON.stringify({ wholeMs, jobs: manifest.jobs.length, items, sha256: raw.sha256 }));
    return;
  }
  const { indexCsvJobs, openJobs } = await dist('csv/job-index.js');
  let started = performance.now();
  const index = await indexCsvJobs(file);
  const indexMs = performance.now() - started;
  globalThis.gc();
  const { heapUsed, external, arrayBuffers, rss } = process.memoryUsage();
  const indexPeak = peakRssBytes();
  started = performance.now();
  let jobs = 0;
  let items = 0;
  const reader = await openJobs(index);
  for (let from = 0; from < index.jobCount; from += window) {
    const w = await reader.read(from, Math.min(from + window, index.jobCount));
    jobs += w.jobs.length;
    for (const job of w.jobs) items += job.items.length;
  }
  await reader.close();
  const readMs = performance.now() - started;
  globalThis.gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const { tableBytes, sha256 } = index;
  const out = {
    indexMs,
    indexPeak,
    heapUsed,
    external,
    arrayBuffers,
    rss,
    tableBytes,
    readMs,
    jobs,
    items,
    sha256,
    heapAfter,
  };
  console.log(JSON.stringify(out));
}
