#!/usr/bin/env node
/**
 * `npm run bench:recognise` — what recognising a shop export by its header costs: `htorder
 * check FILE` (no mapping: every preset's signature is read, then the one that fits) against
 * `htorder check --mapping PRESET FILE` (that preset only), on the shipped samples of several
 * presets and a German-Excel re-save. Whole processes, alternating (odd runs recognise first),
 * so a busy neighbour slows both; prints every run, then the medians of wall and CPU time and
 * their difference. Goal: the recognised check within 0.15 s of the mapped one (median of 5).
 *
 * Options: --runs N (default 5), --cli FILE (another build's dist/cli/main.js, for before/after).
 * Environment: BENCH_RUNS, BENCH_CLI.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endOfOptions, load, measureProcess, median, option, seconds } from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(option('--runs', 'BENCH_RUNS', 5));
const CLI = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
endOfOptions();
const GOAL_MS = 150;

const SAMPLES = [
  ['samples/shopify/orders_export.csv', 'shopify'],
  ['samples/amazon/unshipped-orders-2026-11-22.txt', 'amazon'],
  ['samples/ebay/orders-report-2026-11-22.csv', 'ebay'],
  ['test/presets/fixtures/ebay-orders-excel-de.csv', 'ebay'],
];

const dir = await mkdtemp(join(tmpdir(), 'htorder-bench-recognise-'));
const statsFile = join(dir, 'stats.json');
const env = { ...process.env, HTORDER_STATE_DIR: join(dir, 'state'), HTORDER_LOG_LEVEL: 'silent' };
let worst = 0;
try {
  console.log(`htorder check, recognised vs --mapping: median of ${runs} (${load()})`);
  for (const [sample, preset] of SAMPLES) {
    const file = join(dir, basename(sample));
    await copyFile(join(root, sample), file);
    const recognised = [];
    const mapped = [];
    for (let i = 0; i < runs; i++) {
      const order = i % 2 === 0 ? [recognised, mapped] : [mapped, recognised];
      for (const into of order) {
        const args = into === mapped ? ['check', '--mapping', preset, file] : ['check', file];
        const r = await measureProcess([CLI, ...args], { statsFile, env, cwd: dir });
        if (r.code !== 0) throw new Error(`check ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
        into.push(r);
      }
    }
    const wall = (rs) => median(rs.map((r) => r.wallMs));
    const cpu = (rs) => median(rs.map((r) => r.cpuMs));
    const diff = wall(recognised) - wall(mapped);
    worst = Math.max(worst, diff);
    console.log(
      `  ${basename(sample).padEnd(34)} recognised ${seconds(wall(recognised))} (CPU ${seconds(cpu(recognised))}), ` +
        `--mapping ${preset} ${seconds(wall(mapped))} (CPU ${seconds(cpu(mapped))}): ` +
        `+${(diff / 1000).toFixed(3)} s wall, +${((cpu(recognised) - cpu(mapped)) / 1000).toFixed(3)} s CPU`,
    );
  }
  console.log(`worst difference +${(worst / 1000).toFixed(3)} s (goal ≤ ${(GOAL_MS / 1000).toFixed(2)} s) (${load()})`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
