import { appendFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosRig, formatChaosTable, type ChaosRow } from '../support/chaos.js';
import { expectExactlyOnce, runScenario, type ScenarioResult, watchScenario } from '../support/chaos-scenarios.js';
import { requireDist } from '../support/dist.js';

/**
 * The long chaos suite (`npm run test:chaos`, issue 7): the built CLI against a sandbox with
 * 10% create-then-drop, 5% create-then-500, 5% 503, 2% 429 (Retry-After), 2% resets, latency
 * jitter on every call and 3-second tokens, killed with SIGKILL at random moments and
 * restarted until done. CHAOS_SEED varies the run; the table goes to stdout and, with
 * CHAOS_TABLE=path, to a file; with CHAOS_RESULTS=path, each scenario's row, exit codes and
 * problems are appended to it as a line of JSON (for runs repeated in a row); with
 * CHAOS_LOG_DIR=path, every watcher's output is kept there.
 */

const seed = Number(process.env.CHAOS_SEED ?? 7);
const rows: ChaosRow[] = [];
let rig: ChaosRig;

beforeAll(async () => {
  requireDist();
  rig = await ChaosRig.start({ tokenTtlSeconds: 3 });
});
afterAll(async () => {
  const table = formatChaosTable(rows);
  console.log(`\nchaos, seed ${seed}\n${table}\n`);
  if (process.env.CHAOS_TABLE) await writeFile(process.env.CHAOS_TABLE, `${table}\n`);
  await rig?.close();
});

async function expectClean(r: ScenarioResult): Promise<void> {
  rows.push(r.row);
  if (process.env.CHAOS_RESULTS) {
    const line = { seed, ...r.row, exitCodes: r.exitCodes, problems: r.problems.slice(0, 20) };
    await appendFile(process.env.CHAOS_RESULTS, `${JSON.stringify(line)}\n`);
  }
  expectExactlyOnce(r);
}

describe('chaos: exactly once under faults and kill -9', () => {
  it('1,000 jobs, one process killed 20+ times', async () => {
    const r = await runScenario(rig, {
      name: 'run 1000 jobs, 1 process',
      jobs: 1000,
      kills: 20,
      seed,
      // Well within the test's timeout: a process that hangs fails the scenario with the output.
      deadlineMs: 600_000,
    });
    await expectClean(r);
    expect(r.row.kills).toBeGreaterThanOrEqual(20);
    expect(r.row.created).toBe(1000);
  });

  it('1,000 jobs in 2 manifests, 3 processes at once, each killed repeatedly', async () => {
    const r = await runScenario(rig, {
      name: 'run 1000 jobs, 3 processes',
      jobs: 1000,
      files: 2,
      processes: 3,
      kills: 21,
      seed: seed + 1,
      deadlineMs: 600_000,
    });
    await expectClean(r);
    expect(r.row.kills).toBeGreaterThanOrEqual(21);
  });

  const watched = [
    { kind: 'folder', what: 'a folder', name: 'watch folder, 2 watchers × 4 files', seed: seed + 2 },
    { kind: 's3', what: 'an S3 bucket', name: 'watch S3, 2 watchers × 4 files', seed: seed + 3 },
  ] as const;
  for (const w of watched) {
    it(`watch ${w.what}: 20 files × 15 jobs, 2 watchers with 4 files in flight each, killed 12 times`, async () => {
      const r = await watchScenario(rig, {
        name: w.name,
        kind: w.kind,
        files: 20,
        jobsPerFile: 15,
        watchers: 2,
        parallelFiles: 4,
        kills: 12,
        seed: w.seed,
        // Well within the test's timeout, so a hang fails with the watchers' output.
        deadlineMs: 420_000,
      });
      await expectClean(r);
      expect(r.mostFilesInFlight).toBeGreaterThan(1);
    });
  }
});
