/**
 * What the benchmarks that run `htorder` on inputs of several sizes against the sandbox share:
 * their --jobs list, and a sandbox with the demo account's orderable assets and environment,
 * and a work folder, for the length of the benchmark.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../../dist/sandbox/index.js';
import { demoRunEnv, orderableAssets } from './demo-account.mjs';
import { option } from './measure.mjs';

/** --jobs N[,N…] (BENCH_JOBS), `fallback` when not given: positive numbers, `_` allowed as a separator. */
export function jobSizes(fallback) {
  const sizes = String(option('--jobs', 'BENCH_JOBS', fallback))
    .split(',')
    .map((n) => Number(n.replace(/_/g, '')));
  if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error('--jobs: one or more positive numbers');
  return sizes;
}

/**
 * Runs `fn({ sandbox, work, stats, assets, env })` with a sandbox, `lines` orderable asset tags,
 * a run's environment of `concurrency` calls and a work folder named after `name`; removes
 * them afterwards.
 */
export async function onSandbox(name, { lines, concurrency }, fn) {
  const sandbox = await startSandbox({ port: 0 });
  const work = await mkdtemp(join(tmpdir(), `htorder-bench-${name}-`));
  try {
    const assets = await orderableAssets(sandbox, lines);
    const env = demoRunEnv(sandbox, concurrency);
    await fn({ sandbox, work, stats: join(work, 'stats.json'), assets, env });
  } finally {
    await sandbox.close();
    await rm(work, { recursive: true, force: true });
  }
}
