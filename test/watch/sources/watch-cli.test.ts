import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { CLI, requireDist } from '../../support/dist.js';
import { startLoopback } from '../../support/loopback-server.js';
import { tempDir } from '../../support/temp-files.js';
import { sandboxWithEnv, waitFor } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

/** The built CLI as a real process: crash recovery and signals need a process to kill. */

/**
 * Deadlines of the waits on a spawned watcher. Each wait covers a Node process starting
 * (loading the CLI) and several API calls with injected latency; on a loaded machine (load
 * 5–25 on 2 cores, as when several suites run at once) a start alone takes seconds and the
 * whole took past waitFor's default 15 s. A deadline only bounds a failing run: a passing run
 * is not slower for it. The tests' own timeouts (PROCESS_TEST_MS) hold two such waits and more.
 */
const PROCESS_WAIT_MS = 60_000;
const PROCESS_TEST_MS = 180_000;

let sandbox: Sandbox;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  requireDist();
  state = await tempDir('htorder-watch-cli-state-');
  ({ sandbox, env } = await sandboxWithEnv(state.path));
});
afterAll(async () => {
  await sandbox.close();
  await state.remove();
});

/** Watchers spawned by the current test; one a failed test left running is killed after it. */
const spawned: ChildProcess[] = [];
/** Kills the watchers still running and waits for them to exit: they write in the drop folder until then. */
const killSpawned = async (): Promise<void> => {
  await Promise.all(
    spawned.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }),
  );
};
afterEach(killSpawned);

function spawnWatch(
  dir: string,
  extraEnv: Record<string, string> = {},
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    [CLI, 'watch', dir, '--scan-interval', '100', '--stable-time', '100', '--lease', '2000'],
    {
      env: { ...process.env, ...env, HTORDER_CONCURRENCY: '1', HTORDER_LOG_LEVEL: 'info', ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  spawned.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** A watcher on `dir` once it says it is watching (`what` names it in a timeout). */
async function startWatch(
  dir: string,
  what: string,
  extraEnv: Record<string, string> = {},
): Promise<ReturnType<typeof spawnWatch>> {
  const w = spawnWatch(dir, extraEnv);
  await waitFor(() => (w.output().includes('watching for manifests') ? true : undefined), what, PROCESS_WAIT_MS);
  return w;
}

/**
 * `use` with a fresh drop folder and the sandbox reset to slow creates, one at a time: time to
 * signal a watcher between orders. The faults are cleared and the folder removed afterwards.
 */
async function withSlowCreates(use: (drop: string) => Promise<void>): Promise<void> {
  const drop = await tempDir('htorder-watch-cli-');
  await sandbox.admin.reset();
  await sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'latency', latencyMs: 300 }]);
  try {
    await use(drop.path);
  } finally {
    await killSpawned();
    await sandbox.admin.clearFaults();
    await drop.remove();
  }
}

const ls = async (dir: string): Promise<string[]> => (await readdir(dir).catch(() => [])).sort();

describe('htorder watch (process)', () => {
  it(
    'after kill -9 mid-file, a restart leaves exactly one job per order and complete reports',
    async () => {
      await withSlowCreates(async (drop) => {
        const first = await startWatch(drop, 'the first watcher to start');
        await writeFile(join(drop, 'k.yaml'), manifest('K', 6));
        await waitFor(
          async () => ((await sandbox.admin.jobs()).length >= 2 ? true : undefined),
          'two jobs created',
          PROCESS_WAIT_MS,
        );
        first.child.kill('SIGKILL');
        await first.exited;
        expect(await ls(join(drop, 'processing'))).toContain('k.yaml');
        const createdBeforeCrash = (await sandbox.admin.jobs()).length;
        expect(createdBeforeCrash).toBeLessThan(6);

        // The latency served to kill the first watcher between orders; the restart needs none,
        // and without it the rest is four round trips instead of four times 2 × 300 ms more.
        await sandbox.admin.clearFaults();
        const second = spawnWatch(drop);
        await waitFor(
          async () => ((await ls(join(drop, 'done'))).includes('k.yaml') ? true : undefined),
          'k.yaml in done/',
          PROCESS_WAIT_MS,
        );
        second.child.kill('SIGTERM');
        expect(await second.exited).toBe(0);

        const orders = (await sandbox.admin.jobs()).map((j) => j.orderNumber).sort();
        expect(orders).toEqual(['K-1', 'K-2', 'K-3', 'K-4', 'K-5', 'K-6']);
        const report = JSON.parse(await readFile(join(drop, 'done', 'k.yaml.result.json'), 'utf8'));
        expect(report.jobs).toHaveLength(6);
        for (const job of report.jobs) {
          expect(['submitted', 'already-submitted']).toContain(job.status);
          expect(job.jobNumber).toEqual(expect.any(Number));
        }
        expect(
          report.jobs.filter((j: { status: string }) => j.status === 'already-submitted').length,
        ).toBeGreaterThanOrEqual(2);
        expect(await ls(join(drop, 'done'))).toEqual(['k.yaml', 'k.yaml.result.csv', 'k.yaml.result.json']);
        expect(await ls(join(drop, 'processing'))).toEqual([]); // no input, no claim left behind
        expect(second.output()).toContain('resuming an input left in processing');
      });
    },
    PROCESS_TEST_MS,
  );

  it(
    'on SIGTERM finishes the input in flight, writes its reports and exits 0',
    async () => {
      await withSlowCreates(async (drop) => {
        const w = await startWatch(drop, 'the watcher to start');
        await writeFile(join(drop, 't.yaml'), manifest('T', 3));
        await waitFor(
          async () => ((await sandbox.admin.jobs()).length >= 1 ? true : undefined),
          'the first job',
          PROCESS_WAIT_MS,
        );
        w.child.kill('SIGTERM');
        expect(await w.exited).toBe(0);
        expect(await ls(join(drop, 'done'))).toEqual(['t.yaml', 't.yaml.result.csv', 't.yaml.result.json']);
        expect((await sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual(['T-1', 'T-2', 'T-3']);
        expect(w.output()).toContain('stopping');
      });
    },
    PROCESS_TEST_MS,
  );

  it(
    'a second SIGTERM once it stopped (while it closes) leaves its exit 0, its claims released',
    async () => {
      // A webhook that never answers: the stopped watcher gives its queued notification a few
      // seconds while it closes, and the second signal comes then.
      const hook = await startLoopback(() => undefined);
      try {
        await withSlowCreates(async (drop) => {
          const w = await startWatch(drop, 'the watcher to start', { HTORDER_NOTIFY_URL: `${hook.url}/hook` });
          await writeFile(join(drop, 'broken.yaml'), 'version: 1\njobs: [ {');
          await waitFor(() => (hook.seen.length > 0 ? true : undefined), 'the failure told', PROCESS_WAIT_MS);
          w.child.kill('SIGTERM');
          await waitFor(() => (w.output().includes('"msg":"stopped"') ? true : undefined), 'stopped', PROCESS_WAIT_MS);
          expect(w.child.exitCode).toBeNull();
          w.child.kill('SIGTERM');
          expect(await w.exited, w.output().slice(-2000)).toBe(0);
          expect(await ls(join(drop, 'failed'))).toContain('broken.yaml');
          expect(await ls(join(drop, 'processing'))).toEqual([]);
        });
      } finally {
        await hook.close();
      }
    },
    PROCESS_TEST_MS,
  );
});
