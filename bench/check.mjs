#!/usr/bin/env node
/**
 * `npm run bench:check` — how fast and how lean `htorder check` is on a big CSV.
 *
 * Generates a 1,000,000-row default-template CSV (~150k jobs) in the OS temp folder, then runs,
 * each in its own child process so peak memory is measured cleanly:
 *   1. a bare csv-parse pass over the file (the floor: parsing alone),
 *   2. the CSV reader alone (readCsvDocument: decoding, grouping, typing, source tables),
 *   3. the full `node dist/cli/main.js check FILE` (reader + schema + rules + all reports).
 * Prints rows/s, wall time and peak RSS of each, and the goals: check ≤ 2× the bare pass,
 * peak RSS ≤ 400 MB.
 *
 * Then the mapped benchmark: a Shopify-shaped export of --mapped-rows N rows (default 100000)
 * through `check --mapping shopify`, against the same lines in the default template; goal:
 * mapped ≤ 3× the template.
 *
 * Options: --rows N (default 1000000), --keep (leave the CSV and reports in place),
 * --runs N (default 1; with more, the best time of each step is reported), --mapped-rows N.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCsv } from './lib/generate-csv.mjs';
import { generateShopify } from './lib/generate-shopify.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
};
const rows = Number(arg('--rows', 1_000_000));
const runs = Number(arg('--runs', 1));
const keep = process.argv.includes('--keep');
const mappedRows = Number(arg('--mapped-rows', 100_000));
const MB = 1024 * 1024;

/** Runs `node [--import report-peak] args`, returns wall ms, peak RSS, exit code and stdout. */
async function measure(args, statsFile) {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', join(root, 'bench/lib/report-peak.mjs'), ...args], {
    cwd: root,
    env: { ...process.env, HTORDER_BENCH_STATS: statsFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  const wallMs = performance.now() - started;
  const stats = JSON.parse(await readFile(statsFile, 'utf8'));
  return { wallMs, code, stdout, stderr, ...stats };
}

const dir = await mkdtemp(join(tmpdir(), 'htorder-bench-'));
const file = join(dir, 'orders.csv');
try {
  const t = performance.now();
  const gen = await generateCsv(file, rows);
  console.log(
    `generated ${gen.rows.toLocaleString('en')} rows, ${gen.jobs.toLocaleString('en')} jobs, ${(gen.bytes / MB).toFixed(0)} MB in ${((performance.now() - t) / 1000).toFixed(1)} s → ${file}`,
  );

  const best = {};
  for (let run = 0; run < runs; run++) {
    const bare = await measure([join(root, 'bench/lib/bare-parse.mjs'), file], join(dir, 'bare.json'));
    if (bare.code !== 0) throw new Error(`bare parse failed:\n${bare.stderr}`);
    const reader = await measure([join(root, 'bench/lib/read-only.mjs'), file], join(dir, 'reader.json'));
    if (reader.code !== 0) throw new Error(`reader failed:\n${reader.stderr}`);
    const check = await measure([join(root, 'dist/cli/main.js'), 'check', file], join(dir, 'check.json'));
    if (check.code !== 0)
      throw new Error(`check exited ${check.code} (expected 0 for a valid file):\n${check.stderr.slice(0, 2000)}`);
    const results = {
      bare: { ms: JSON.parse(bare.stdout).ms, rss: bare.maxRssBytes },
      reader: { ms: JSON.parse(reader.stdout).ms, rss: reader.maxRssBytes },
      check: { ms: check.wallMs, rss: check.maxRssBytes },
    };
    for (const [k, v] of Object.entries(results)) {
      if (best[k] === undefined || v.ms < best[k].ms)
        best[k] = { ...v, rss: Math.min(v.rss, best[k]?.rss ?? Infinity) };
    }
  }

  const line = (name, r, note = '') =>
    `${name.padEnd(34)} ${(r.ms / 1000).toFixed(2).padStart(7)} s ${Math.round(rows / (r.ms / 1000))
      .toLocaleString('en')
      .padStart(10)} rows/s ${(r.rss / MB).toFixed(0).padStart(6)} MB peak RSS ${note}`;
  console.log('');
  console.log(line('bare csv-parse pass (floor)', best.bare));
  console.log(
    line('CSV reader alone (readCsvDocument)', best.reader, `${(best.reader.ms / best.bare.ms).toFixed(2)}× bare`),
  );
  console.log(
    line(
      'htorder check (everything)',
      best.check,
      `${(best.check.ms / best.bare.ms).toFixed(2)}× bare (wall, incl. startup)`,
    ),
  );
  const timeOk = best.check.ms <= 2 * best.bare.ms;
  const rssOk = best.check.rss <= 400 * MB;
  console.log('');
  console.log(
    `goal: check ≤ 2× bare parse … ${timeOk ? 'met' : 'NOT met'} (${(best.check.ms / best.bare.ms).toFixed(2)}×)`,
  );
  console.log(`goal: peak RSS ≤ 400 MB …… ${rssOk ? 'met' : 'NOT met'} (${(best.check.rss / MB).toFixed(0)} MB)`);

  // The mapped benchmark: the same lines as a Shopify export and in the default template.
  const shopify = join(dir, 'orders_export.csv');
  const template = join(dir, 'orders_template.csv');
  const gen2 = await generateShopify(shopify, template, mappedRows);
  // CPU time (user + system) as well as wall time: on a busy machine the wall clock measures the
  // neighbours; the goal is judged on CPU time, which is what the export costs.
  const timed = { mapped: Infinity, template: Infinity, mappedCpu: Infinity, templateCpu: Infinity };
  for (let run = 0; run < runs; run++) {
    const m = await measure(
      [join(root, 'dist/cli/main.js'), 'check', '--mapping', 'shopify', shopify],
      join(dir, 'm.json'),
    );
    if (m.code !== 0) throw new Error(`mapped check exited ${m.code}:\n${m.stderr.slice(0, 2000)}`);
    const p = await measure([join(root, 'dist/cli/main.js'), 'check', template], join(dir, 't.json'));
    if (p.code !== 0) throw new Error(`template check exited ${p.code}:\n${p.stderr.slice(0, 2000)}`);
    timed.mapped = Math.min(timed.mapped, m.wallMs);
    timed.template = Math.min(timed.template, p.wallMs);
    timed.mappedCpu = Math.min(timed.mappedCpu, m.userMs + m.systemMs);
    timed.templateCpu = Math.min(timed.templateCpu, p.userMs + p.systemMs);
  }
  const ratio = timed.mappedCpu / timed.templateCpu;
  const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
  console.log('');
  console.log(
    `mapped: ${gen2.rows.toLocaleString('en')} rows, ${gen2.orders.toLocaleString('en')} orders (Shopify export, 79 columns)`,
  );
  console.log(`check, default template ……… ${s(timed.templateCpu)} CPU, ${s(timed.template)} wall`);
  console.log(`check --mapping shopify …… ${s(timed.mappedCpu)} CPU, ${s(timed.mapped)} wall`);
  console.log(`goal: mapped ≤ 3× template (CPU) … ${ratio <= 3 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}×)`);
} finally {
  if (keep) console.log(`kept ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}
