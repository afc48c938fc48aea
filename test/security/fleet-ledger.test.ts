import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createdPerOrder, type Fleet, manifestFolder, useFleet, watchersWithAKill } from '../support/fleet.js';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { sleep } from '../support/chaos.js';
import { pgClusterForFile } from '../support/pg-cluster.js';
import { startTestS3 } from '../support/s3.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * Several hosts sharing one ledger database (ledgerUrl), each an htorder process with a state
 * dir of its own, against one sandbox: the failures measured with a ledger per host are gone.
 * Sizes here are the normal suite's; the long suite (test/chaos/fleet.long.test.ts) runs the
 * measured sizes. The sandbox's own record of created jobs is the count: one per order.
 */

const cluster = await pgClusterForFile();

describe.skipIf(!cluster)('a fleet sharing the PostgreSQL ledger', () => {
  const the = useFleet(cluster);

  it('three hosts running the same file at once create each order once', async () => {
    const n = 60;
    const dir = await manifestFolder('SAME', n);
    const hosts = [0, 1, 2].map((h) => the.fleet.spawn(h, ['run', 'orders.yaml'], dir));
    const codes = await Promise.all(hosts.map((p) => p.exited));
    expect(codes, hosts.map((p) => p.output()).join('\n')).toEqual([0, 0, 0]);
    const created = await createdPerOrder(the.sandbox);
    expect(created.size).toBe(n);
    expect([...created.values()].every((c) => c === 1)).toBe(true);
    expect((await the.fleet.entries()).filter((e) => e.state === 'submitted')).toHaveLength(n);
  }, 120_000);

  it('a second host re-running a file the first already sent sends nothing (its ledger is the same)', async () => {
    const n = 40;
    const dir = await manifestFolder('AGAIN', n);
    expect(await the.fleet.spawn(0, ['run', 'orders.yaml'], dir).exited).toBe(0);
    await the.sandbox.admin.resetCalls();
    const second = the.fleet.spawn(1, ['run', 'orders.yaml', '--json'], dir);
    expect(await second.exited).toBe(0);
    expect((await the.sandbox.admin.jobs()).length).toBe(n);
    const report = JSON.parse(await readFile(join(dir, 'orders.yaml.result.json'), 'utf8')) as {
      jobs: { status: string }[];
    };
    expect(report.jobs.every((j) => j.status === 'already-submitted')).toBe(true);
    // The second host searched nothing: the shared ledger vouches for what every host sent.
    expect((await the.sandbox.admin.calls())['GET /Jobs/active'] ?? 0).toBe(0);
  }, 120_000);

  it('three watchers with their own state dirs on one folder, one killed -9: every order once, every file done', async () => {
    const files = 45;
    const { codes, killedAt, done } = await watchersWithAKill(the.fleet, the.sandbox, files, 100_000);
    expect(killedAt).toBeGreaterThan(0);
    expect(codes.slice(1)).toEqual([0, 0]);
    expect(done).toHaveLength(files);
    const created = await createdPerOrder(the.sandbox);
    expect(created.size).toBe(files);
    expect([...created.values()].every((c) => c === 1)).toBe(true);
  }, 120_000);

  it('a bucket watcher with ledgerUrl needs no bucketLedger: its ledger and claims are in the database', async () => {
    const s3 = await startTestS3({ conditional: true });
    try {
      await s3.client.send(
        new PutObjectCommand({ Bucket: s3.bucket, Key: 'incoming/a.yaml', Body: manifest('BUCKET', 2) }),
      );
      const cwd = await manifestFolder('UNUSED', 1);
      const watcher = the.fleet.spawn(0, ['watch', `s3://${s3.bucket}/incoming/`, '--scan-interval', '100'], cwd, {
        ...s3.env,
        HTORDER_LOG_LEVEL: 'info',
      });
      const deadline = Date.now() + 60_000;
      while ((await the.fleet.entries()).filter((e) => e.state === 'submitted').length < 2 && Date.now() < deadline)
        await sleep(100);
      watcher.child.kill('SIGTERM');
      expect(await watcher.exited, watcher.output()).toBe(0);
      expect(await createdPerOrder(the.sandbox)).toEqual(
        new Map([
          ['BUCKET-1', 1],
          ['BUCKET-2', 1],
        ]),
      );
      // Nothing of the ledger or the claims in the bucket: only the drop prefix's own objects.
      const keys = ((await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map(
        (o) => o.Key ?? '',
      );
      expect(keys.filter((k) => !k.startsWith('incoming/'))).toEqual([]);
    } finally {
      await s3.close();
    }
  }, 120_000);

  it('shares one daily budget across hosts, and an approval given on another host', async () => {
    // Each order is estimated alike; the day's budget lets 6 of the 12 through in all.
    const one = await estimateOfOne(the.fleet);
    await the.sandbox.admin.reset();
    const dirs = [await manifestFolder('BUDGET-A', 6), await manifestFolder('BUDGET-B', 6)];
    const budget = { HTORDER_MAX_DAILY_COST: String(one * 6 + one / 2) };
    const runs = dirs.map((dir, h) => the.fleet.spawn(h, ['run', 'orders.yaml', '--partial'], dir, budget));
    const codes = await Promise.all(runs.map((r) => r.exited));
    // Counting is one step per input: the first takes the budget, the second's jobs wait (exit 4).
    expect([...codes].sort(), runs.map((r) => r.output()).join('\n')).toEqual([0, 4]);
    expect((await the.sandbox.admin.jobs()).length).toBe(6);
    const held = codes.indexOf(4);
    const dir = dirs[held]!;
    // Host 2 approves the held jobs; their own host then sends exactly those, once.
    expect(await the.fleet.spawn(2, ['approve', join(dir, 'orders.yaml')], dir).exited).toBe(0);
    expect(await the.fleet.spawn(held, ['run', 'orders.yaml', '--partial'], dir, budget).exited).toBe(0);
    const created = await createdPerOrder(the.sandbox);
    expect(created.size).toBe(12);
    expect([...created.values()].every((c) => c === 1)).toBe(true);
  }, 120_000);
});

/** What the sandbox estimates one order of these manifests at (the plan's own estimate). */
async function estimateOfOne(fleet: Fleet): Promise<number> {
  const dir = await manifestFolder('EST', 1);
  const plan = fleet.spawn(9, ['plan', 'orders.yaml', '--json'], dir);
  expect(await plan.exited).toBe(0);
  const report = JSON.parse(await readFile(join(dir, 'orders.yaml.result.json'), 'utf8')) as {
    jobs: { estimatedCost: number | null }[];
  };
  const total = report.jobs[0]?.estimatedCost;
  if (total === undefined || total === null) throw new Error('the plan has no estimate');
  return total;
}
