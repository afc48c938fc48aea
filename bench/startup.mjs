#!/usr/bin/env node
/**
 * `npm run bench:startup` — what a command costs before it does anything of size: `htorder
 * --version`, `htorder check` of the manifest `htorder init` writes, and `htorder run` of a
 * one-job CSV of the default template against the sandbox (5 reorder lines; the state dir kept
 * across runs, as a user's is). Whole processes, spawn to exit; with --cli, the other build's
 * same command right after each (odd runs this build first), so a busy neighbour slows both.
 * Prints every run and the spread of wall time, CPU time and peak RSS per command and build.
 * Goals: `--version` ≤ 0.15 s and the init manifest's check ≤ 0.38 s (wall, median).
 *
 * Options: --runs N (default 8), --cli FILE (another build's dist/cli/main.js, for before/after).
 * Environment: BENCH_RUNS, BENCH_CLI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/index.js';
import { demoRunEnv, orderableAssets } from './lib/demo-account.mjs';
import { endOfOptions, load, measureProcess, median, megabytes, option, seconds, spread } from './lib/measure.mjs';
import { writeRunManifest } from './lib/run-manifest.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(option('--runs', 'BENCH_RUNS', 8));
const OTHER = option('--cli', 'BENCH_CLI', undefined);
endOfOptions();
const builds = [['this build', join(root, 'dist/cli/main.js')], ...(OTHER === undefined ? [] : [['--cli', OTHER]])];
const GOALS = { version: 150, check: 380 };

const dir = await mkdtemp(join(tmpdir(), 'htorder-bench-startup-'));
const sandbox = await startSandbox({ port: 0 });
try {
  const statsFile = join(dir, 'stats.json');
  const home = join(dir, 'home');
  // No config file, no real home: what a command reads at start is its own.
  const quiet = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), HTORDER_LOG_LEVEL: 'silent' };
  const init = spawnSync(process.execPath, [builds[0][1], 'init', join(dir, 'init')], { env: quiet, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`htorder init exited ${init.status}: ${init.stderr}`);
  const assets = await orderableAssets(sandbox, 5);
  const runEnv = { ...demoRunEnv(sandbox, 8), HOME: home, XDG_CONFIG_HOME: join(home, 'config') };
  const commands = {
    version: { args: () => ['--version'], env: quiet },
    check: { args: () => ['check', join(dir, 'init', 'orders.yaml')], env: quiet },
    run: {
      args: async (b, i) => {
        const file = join(dir, `run-${b}-${i}.csv`);
        await writeRunManifest(file, { format: 'csv', tag: `S${b}x${i}`, jobs: 1, lines: 5, assets });
        return ['run', file];
      },
      env: (b) => ({ ...runEnv, HTORDER_STATE_DIR: join(dir, `state-${b}`) }),
    },
  };
  const results = new Map();
  console.log(
    `start-up: ${RUNS} runs of each command, ${builds.map(([n]) => n).join(' and ')} alternating (${load()})`,
  );
  for (let i = -1; i < RUNS; i++) {
    // Run -1 warms the file cache and each build's state dir (its ledger vouches for the account), untimed.
    const order = i % 2 === 0 ? builds.map((_, b) => b) : builds.map((_, b) => b).reverse();
    for (const [name, command] of Object.entries(commands)) {
      for (const b of order) {
        const args = await command.args(b, i);
        const env = typeof command.env === 'function' ? command.env(b) : command.env;
        const r = await measureProcess([builds[b][1], ...args], { statsFile, env, cwd: dir });
        const expected = name === 'check' ? [0, 1] : [0];
        if (!expected.includes(r.code))
          throw new Error(`${builds[b][0]} ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
        if (i < 0) continue;
        const key = `${name}\u0000${b}`;
        results.set(key, [...(results.get(key) ?? []), r]);
        console.log(
          `  run ${i + 1} ${builds[b][0].padEnd(10)} ${name.padEnd(7)} ${seconds(r.wallMs)} (CPU ${seconds(r.cpuMs)}, ` +
            `main thread ${seconds(r.mainThreadMs)}, peak RSS ${megabytes(r.maxRssBytes)}) · ${load()}`,
        );
      }
    }
  }
  console.log('spread (min–max, median):');
  for (const name of Object.keys(commands)) {
    for (const [b, [buildName]] of builds.entries()) {
      const rs = results.get(`${name}\u0000${b}`);
      const goal = GOALS[name];
      const met =
        goal === undefined
          ? ''
          : ` · goal ≤ ${seconds(goal)}: ${median(rs.map((r) => r.wallMs)) <= goal ? 'met' : 'not met'}`;
      console.log(
        `  ${name.padEnd(7)} ${buildName.padEnd(10)} wall ${spread(
          rs.map((r) => r.wallMs),
          seconds,
        )}; ` +
          `CPU ${spread(
            rs.map((r) => r.cpuMs),
            seconds,
          )}; main thread ${spread(
            rs.map((r) => r.mainThreadMs),
            seconds,
          )}; ` +
          `peak RSS ${spread(
            rs.map((r) => r.maxRssBytes),
            megabytes,
          )}${met}`,
      );
    }
  }
} finally {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
}
