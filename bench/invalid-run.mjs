#!/usr/bin/env node
/**
 * `npm run bench:invalid` — `htorder run` of an input whose jobs check refuses: its time, CPU and
 * peak RSS, which must not grow with its jobs any more than a valid input's does.
 *
 * For each size in --jobs (default 100,000; a list such as 100000,300000 runs each in turn): the
 * manifest `npm run bench` runs (lib/run-manifest.mjs: the CSV template, 5 reorder lines a job),
 * with every line's quantity made `x` in one job of --every (1: every job; 3: one in three, the
 * others valid, dry-run and held back) — an error a line, as a customer's export whose quantity
 * column went wrong gives. Run by the real CLI entry (`node dist/cli/main.js run FILE`) against
 * the sandbox, --runs times (1), the sandbox reset before each. Prints each run's wall time, CPU
 * time and peak RSS, the spread, and the goal: peak RSS ≤ 512 MB.
 *
 * Options: --jobs N[,N…] (100000), --every K (1), --partial (run --partial: the valid jobs are
 * submitted, exit 1 still), --runs N (1), --concurrency N (8), --cli FILE
 * (another build's dist/cli/main.js, for before/after), --reports-cli FILE (after each size's
 * runs, one run of this build and one of FILE's on the same input: their result.json, result.csv
 * and errors.txt must say the same, timestamps aside; lib/same-reports.mjs).
 * Environment: BENCH_JOBS, BENCH_EVERY, BENCH_PARTIAL=1, BENCH_RUNS, BENCH_CONCURRENCY, BENCH_CLI, BENCH_REPORTS_CLI.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRunManifest } from './lib/run-manifest.mjs';
import { reportDifference } from './lib/same-reports.mjs';
import { jobSizes, onSandbox } from './lib/sandbox-sizes.mjs';
import { endOfOptions, flag, load, measureProcess, megabytes, option, seconds, spread } from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SIZES = jobSizes(100000);
const EVERY = Number(option('--every', 'BENCH_EVERY', 1));
const PARTIAL = flag('--partial') || process.env.BENCH_PARTIAL === '1';
const RUNS = Number(option('--runs', 'BENCH_RUNS', 1));
const CONCURRENCY = Number(option('--concurrency', 'BENCH_CONCURRENCY', 8));
const CLI = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
const REPORTS_CLI = option('--reports-cli', 'BENCH_REPORTS_CLI', undefined);
endOfOptions();
const LINES = 5;
const RSS_GOAL = 512 * 1024 * 1024;
if (!Number.isSafeInteger(EVERY) || EVERY < 1) throw new Error('--every: a positive number');

await onSandbox('invalid', { lines: LINES, concurrency: CONCURRENCY }, async (bench) => {
  for (const jobs of SIZES) await benchSize(jobs, bench);
});

async function benchSize(jobs, { sandbox, work, stats, assets, env }) {
  const file = join(work, 'orders.csv');
  await writeRunManifest(file, { format: 'csv', tag: `I${jobs}`, jobs, lines: LINES, assets });
  await spoil(file);
  const which = EVERY === 1 ? 'every job' : `one job in ${EVERY}`;
  console.log(
    `htorder run of an input check refuses: ${jobs.toLocaleString('en')} jobs × ${LINES} reorder lines (CSV template), every line's quantity "x" in ${which}, concurrency ${CONCURRENCY}${PARTIAL ? ', --partial' : ''}`,
  );
  const run = async (cli, at = file) => {
    await sandbox.admin.reset();
    const stateDir = await mkdtemp(join(work, 'state-'));
    const r = await measureProcess([cli, 'run', ...(PARTIAL ? ['--partial'] : []), at], {
      statsFile: stats,
      env: { ...env, HTORDER_STATE_DIR: stateDir },
      cwd: work,
    });
    await rm(stateDir, { recursive: true, force: true });
    // Exit 1 with the input's summary: it is invalid, as it should be; anything else (a build
    // that cannot start exits 1 too) is a failure of the run.
    if (r.code !== 1 || !r.stderr.includes(`${jobs} jobs: `))
      throw new Error(`htorder run exited ${r.code} without the input's summary:\n${r.stderr.slice(0, 2000)}`);
    return r;
  };
  const rss = [];
  const cpu = [];
  const wall = [];
  for (let i = 1; i <= RUNS; i++) {
    const r = await run(CLI);
    rss.push(r.maxRssBytes);
    cpu.push(r.cpuMs);
    wall.push(r.wallMs);
    console.log(
      `  run ${i}: ${seconds(r.wallMs)} (CPU ${seconds(r.cpuMs)}, ${((r.cpuMs / jobs) * 1000).toFixed(0)} µs per job), peak RSS ${megabytes(r.maxRssBytes)} · ${load()}`,
    );
    for (const s of ['.result.json', '.result.csv', '.errors.txt']) await rm(`${file}${s}`, { force: true });
  }
  if (RUNS > 1)
    console.log(`  wall ${spread(wall, seconds)}; CPU ${spread(cpu, seconds)}; peak RSS ${spread(rss, megabytes)}`);
  console.log(`  goal: peak RSS ≤ 512 MB … met in ${rss.filter((r) => r <= RSS_GOAL).length} of ${RUNS} runs`);
  if (REPORTS_CLI) {
    const at = [];
    for (const [i, cli] of [CLI, REPORTS_CLI].entries()) {
      const dir = join(work, `reports-${i}`);
      await mkdir(dir, { recursive: true });
      const copy = join(dir, 'orders.csv');
      await writeFile(copy, await readFile(file));
      await run(cli, copy);
      at.push(copy);
    }
    const difference = await reportDifference(at[0], at[1]);
    console.log(
      `  reports of this build and ${REPORTS_CLI} on the same input: ${difference === undefined ? 'the same (timestamps aside)' : `DIFFERENT — ${difference}`}`,
    );
    for (const dir of at) await rm(join(dir, '..'), { recursive: true, force: true });
  }
  await rm(file, { force: true });
}

/** Makes every line's quantity `x` in one job of EVERY (the first job among them), rewriting the file in place. */
async function spoil(file) {
  const lines = (await readFile(file, 'utf8')).split('\n');
  let job = -1;
  let order = '';
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === '') continue;
    const number = line.slice(0, line.indexOf(','));
    if (number !== order) {
      job++;
      order = number;
    }
    if (job % EVERY === 0) lines[i] = line.replace(/,\d+$/, ',x');
  }
  await writeFile(file, lines.join('\n'));
}
