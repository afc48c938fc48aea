import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosRig, formatChaosTable, type ChaosRow } from '../support/chaos.js';
import { expectExactlyOnce, runScenario, watchScenario } from '../support/chaos-scenarios.js';
import { requireDist } from '../support/dist.js';
import { createdPerOrder, fleetLedger, manifestFolder, useFleet, watchersWithAKill } from '../support/fleet.js';
import { pgClusterForFile } from '../support/pg-cluster.js';

/**
 * Beyond one machine (`npm run test:chaos`, docs/fleet.md): hosts with state dirs of their own
 * sharing one ledger database. First the failures measured with a ledger per host, at their
 * measured sizes, without faults; then the chaos scenarios with faults, kills and a database
 * restart. CHAOS_SEED varies the run; CHAOS_TABLE=path writes the table.
 */

const cluster = await pgClusterForFile();
const seed = Number(process.env.CHAOS_SEED ?? 7);

describe.skipIf(!cluster)('the failures measured with a ledger per host, with one shared database', () => {
  const the = useFleet(cluster);
  const once = async (n: number): Promise<void> => {
    const created = await createdPerOrder(the.sandbox);
    expect(created.size).toBe(n);
    expect([...created.entries()].filter(([, c]) => c > 1)).toEqual([]);
  };

  it('three hosts running the same 300-order file at once: each order created once', async () => {
    const dir = await manifestFolder('SAME', 300);
    const hosts = [0, 1, 2].map((h) => the.fleet.spawn(h, ['run', 'orders.yaml'], dir));
    expect(await Promise.all(hosts.map((p) => p.exited))).toEqual([0, 0, 0]);
    await once(300);
  });

  it('a second host re-running a 200-order file the first already sent: nothing created again', async () => {
    const dir = await manifestFolder('AGAIN', 200);
    expect(await the.fleet.spawn(0, ['run', 'orders.yaml'], dir).exited).toBe(0);
    expect(await the.fleet.spawn(1, ['run', 'orders.yaml'], dir).exited).toBe(0);
    await once(200);
    const report = JSON.parse(await readFile(join(dir, 'orders.yaml.result.json'), 'utf8')) as {
      summary: { byStatus: Record<string, number> };
    };
    expect(report.summary).toMatchObject({ byStatus: { 'already-submitted': 200 } });
  });

  it('three watchers with their own state dirs on one folder, one killed -9 halfway through 300 one-order files', async () => {
    const { codes, done } = await watchersWithAKill(the.fleet, the.sandbox, 300, 420_000);
    expect(codes.slice(1)).toEqual([0, 0]);
    expect(done).toHaveLength(300);
    await once(300);
  });
});

describe.skipIf(!cluster)('chaos: a fleet sharing the ledger database, with kills and a database restart', () => {
  const rows: ChaosRow[] = [];
  let rig: ChaosRig;
  beforeAll(async () => {
    requireDist();
    rig = await ChaosRig.start({ tokenTtlSeconds: 3 });
  });
  afterAll(async () => {
    const table = formatChaosTable(rows);
    console.log(`\nfleet chaos, seed ${seed}\n${table}\n`);
    if (process.env.CHAOS_TABLE) await writeFile(process.env.CHAOS_TABLE, `${table}\n`);
    await rig?.close();
  });

  it('300 jobs in one file, 3 hosts at once, each killed repeatedly', async () => {
    const r = await runScenario(rig, {
      name: 'fleet run 300 jobs, 3 hosts',
      jobs: 300,
      processes: 3,
      kills: 9,
      seed,
      deadlineMs: 600_000,
      fleet: await fleetLedger(cluster!),
    });
    rows.push(r.row);
    expectExactlyOnce(r);
    expect(r.exitCodes.filter((c) => c !== null && c !== 0 && c !== 3)).toEqual([]);
  });

  for (const kind of ['folder', 's3'] as const) {
    it(`watch ${kind === 'folder' ? 'a folder' : 'an S3 bucket'}: 20 files × 15 jobs, 3 watchers, killed 9 times`, async () => {
      const r = await watchScenario(rig, {
        name: `fleet watch ${kind}, 3 watchers`,
        kind,
        files: 20,
        jobsPerFile: 15,
        watchers: 3,
        parallelFiles: 4,
        kills: 9,
        seed: seed + (kind === 'folder' ? 1 : 2),
        deadlineMs: 420_000,
        fleet: await fleetLedger(cluster!),
      });
      rows.push(r.row);
      expectExactlyOnce(r);
    });
  }
});
