#!/usr/bin/env node
/**
 * `npm run bench:plan` — `htorder plan` of a big input, with and without a saved plan: its time,
 * CPU and peak RSS, which must not grow with the jobs beyond what the saved plan itself holds.
 *
 * For each size in --jobs (default 100,000): the manifest `npm run bench` runs
 * (lib/run-manifest.mjs: the CSV template, 5 reorder lines a job), planned against the sandbox
 * by the real CLI entry three ways, in turn: `plan FILE`, `plan FILE --out PLAN` and
 * `plan FILE --out PLAN --json`; with --base FILE (another build's dist/cli/main.js), that
 * build's same three right after each of this build's, on the same input. Prints each run's
 * wall time, CPU time and peak RSS, and the goal: peak RSS ≤ 512 MB.
 *
 * Options: --jobs N[,N…] (100000), --runs N (1), --concurrency N (8), --cli FILE, --base FILE.
 * Environment: BENCH_JOBS, BENCH_RUNS, BENCH_CONCURRENCY, BENCH_CLI, BENCH_BASE.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRunManifest } from './lib/run-manifest.mjs';
import { jobSizes, onSandbox } from './lib/sandbox-sizes.mjs';
import { endOfOptions, load, measureProcess, megabytes, option, seconds } from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SIZES = jobSizes(100000);
const RUNS = Number(option('--runs', 'BENCH_RUNS', 1));
const CONCURRENCY = Number(option('--concurrency', 'BENCH_CONCURRENCY', 8));
const CLI = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
const BASE = option('--base', 'BENCH_BASE', undefined);
endOfOptions();
const LINES = 5;
const RSS_GOAL = 512 * 1024 * 1024;

await onSandbox('plan', { lines: LINES, concurrency: CONCURRENCY }, async (bench) => {
  for (const jobs of SIZES) await benchSize(jobs, bench);
});

async function benchSize(jobs, { sandbox, work, stats, assets, env }) {
  const file = join(work, 'orders.csv');
  await writeRunManifest(file, { format: 'csv', tag: `P${jobs}`, jobs, lines: LINES, assets });
  console.log(
    `htorder plan: ${jobs.toLocaleString('en')} jobs × ${LINES} reorder lines (CSV template), concurrency ${CONCURRENCY}`,
  );
  const out = join(work, 'plan.json');
  const ways = [
    ['plan', []],
    ['plan --out', ['--out', out]],
    ['plan --out --json', ['--out', out, '--json']],
  ];
  const builds = BASE
    ? [
        ['this build', CLI],
        ['base', BASE],
      ]
    : [['this build', CLI]];
  let met = 0;
  let all = 0;
  for (let i = 1; i <= RUNS; i++) {
    for (const [way, flags] of ways) {
      for (const [name, cli] of builds) {
        await sandbox.admin.reset();
        const stateDir = await mkdtemp(join(work, 'state-'));
        const r = await measureProcess([cli, 'plan', file, ...flags], {
          statsFile: stats,
          env: { ...env, HTORDER_STATE_DIR: stateDir },
          cwd: work,
        });
        await rm(stateDir, { recursive: true, force: true });
        await rm(out, { force: true });
        if (r.code !== 0) throw new Error(`htorder plan exited ${r.code}:\n${r.stderr.slice(0, 2000)}`);
        all++;
        if (r.maxRssBytes <= RSS_GOAL) met++;
        console.log(
          `  run ${i}, ${way}, ${name}: ${seconds(r.wallMs)} (CPU ${seconds(r.cpuMs)}), peak RSS ${megabytes(r.maxRssBytes)} · ${load()}`,
        );
      }
    }
  }
  console.log(`  goal: peak RSS ≤ 512 MB … met in ${met} of ${all} runs`);
  await rm(file, { force: true });
}
