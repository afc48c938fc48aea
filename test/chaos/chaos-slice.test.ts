import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosRig, formatChaosTable, type ChaosRow } from '../support/chaos.js';
import { expectExactlyOnce, runScenario, type ScenarioResult, watchScenario } from '../support/chaos-scenarios.js';
import { requireDist } from '../support/dist.js';
import { fleetLedger } from '../support/fleet.js';
import { pgClusterForFile } from '../support/pg-cluster.js';

/**
 * A short, seeded slice of the chaos suite for every `npm test` (the full one is
 * `npm run test:chaos`): the same scenarios and checks, fewer jobs and kills.
 */

/** The fleet scenarios' ledger database (skipped with a notice where PostgreSQL cannot start; never in CI). */
const cluster = await pgClusterForFile();
const rows: ChaosRow[] = [];
let rig: ChaosRig;

beforeAll(async () => {
  requireDist();
  rig = await ChaosRig.start({ tokenTtlSeconds: 3 });
});
afterAll(async () => {
  console.log(`\nchaos slice\n${formatChaosTable(rows)}\n`);
  await rig?.close();
});

function expectClean(r: ScenarioResult): void {
  rows.push(r.row);
  expectExactlyOnce(r);
}

describe('chaos slice: exactly once under faults and kill -9', () => {
  it('80 jobs, one process killed 3 times', async () => {
    const r = await runScenario(rig, { name: 'run 80 jobs', jobs: 80, kills: 3, seed: 11, deadlineMs: 100_000 });
    expectClean(r);
    // The loop stops at the first run that exits 0: on a loaded machine the manifest may finish
    // before the last planned kill lands, so only "killed at least once" is certain.
    expect(r.row.kills).toBeGreaterThanOrEqual(1);
    expect(Object.values(r.row.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  }, 120_000);

  it('40 jobs, 2 processes at once', async () => {
    expectClean(
      await runScenario(rig, {
        name: 'run 40 jobs, 2 processes',
        jobs: 40,
        processes: 2,
        kills: 2,
        seed: 12,
        deadlineMs: 100_000,
      }),
    );
  }, 120_000);

  const watched = [
    { kind: 'folder', what: 'a folder', name: 'watch folder', seed: 13 },
    { kind: 's3', what: 'an S3 bucket', name: 'watch S3', seed: 14 },
  ] as const;
  for (const { kind, what, name, seed } of watched) {
    it(`watch ${what}, 2 watchers with 3 files in flight each, one killed twice`, async () => {
      const r = await watchScenario(rig, {
        name,
        kind,
        files: 6,
        jobsPerFile: 5,
        watchers: 2,
        parallelFiles: 3,
        kills: 2,
        seed,
        // Within the test's own timeout, so a hang fails with the watchers' output.
        deadlineMs: 100_000,
      });
      expectClean(r);
      expect(r.mostFilesInFlight).toBeGreaterThan(1);
    }, 120_000);
  }

  it.skipIf(!cluster)(
    'a fleet: 3 hosts with their own state dirs run one file at once, killed, the ledger database restarted',
    async () => {
      const r = await runScenario(rig, {
        name: 'fleet run 40 jobs, 3 hosts',
        jobs: 40,
        processes: 3,
        kills: 3,
        seed: 16,
        deadlineMs: 100_000,
        fleet: await fleetLedger(cluster!),
      });
      expectClean(r);
      // The documented exits only: 0, or 3 while the database was away; killed runs have none.
      expect(r.exitCodes.filter((c) => c !== null && c !== 0 && c !== 3)).toEqual([]);
    },
    120_000,
  );

  it.skipIf(!cluster)(
    'a fleet of 3 watchers with their own state dirs on one folder, one killed, the ledger database restarted',
    async () => {
      const r = await watchScenario(rig, {
        name: 'fleet watch folder',
        kind: 'folder',
        files: 6,
        jobsPerFile: 5,
        watchers: 3,
        parallelFiles: 3,
        kills: 2,
        seed: 17,
        deadlineMs: 100_000,
        fleet: await fleetLedger(cluster!),
      });
      expectClean(r);
    },
    120_000,
  );

  it('a scenario that runs out of time fails then, its processes killed, with each one’s output', async () => {
    // 300 jobs cannot be done in 1.5 s: the deadline, not the test's timeout, ends it. Last in the
    // file: a create its killed watchers sent may still land in the shared sandbox afterwards.
    const scenario = watchScenario(rig, {
      name: 'watch deadline',
      kind: 'folder',
      files: 20,
      jobsPerFile: 15,
      watchers: 2,
      kills: 0,
      seed: 15,
      deadlineMs: 1500,
    });
    await expect(scenario).rejects.toThrow(
      /ran out of its 1\.5 s while .*--- process 1 \(pid \d+, SIGKILL;.*--- process 2 \(pid \d+, SIGKILL;/s,
    );
  }, 60_000);
});
