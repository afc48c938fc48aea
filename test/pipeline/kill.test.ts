import { spawn } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLI, requireDist } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

let h: PipelineHarness;
beforeAll(async () => {
  requireDist();
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

/** The real `htorder run`, as a separate process that can be killed. */
function htorder(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: h.workDir,
    env: { ...process.env, ...h.env(), HTORDER_CONCURRENCY: '3', HTORDER_LOCK_STALE_MS: '2000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited };
}

describe('kill -9 in the middle of a run', () => {
  it('a re-run finishes the manifest with no duplicate and nothing missing', async () => {
    // Slow creates so the kill lands while jobs are in flight.
    await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'latency', latencyMs: 150 }]);
    const orders = Array.from({ length: 12 }, (_, i) => ({ orderNumber: `PO-${i + 1}`, items: ITEMS.reorder }));
    const file = await h.write('order.yaml', manifest(orders));

    const first = htorder(['run', file]);
    // Kill once some jobs exist and others are still being created.
    for (;;) {
      const created = (await h.sandbox.admin.jobs()).length;
      if (created >= 3) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    first.child.kill('SIGKILL');
    await first.exited;
    const createdAtKill = (await h.sandbox.admin.jobs()).length;
    expect(createdAtKill).toBeLessThan(12);

    const second = htorder(['run', file]);
    expect(await second.exited).toBe(0);

    const created = (await h.sandbox.admin.jobs()).map((j) => j.orderNumber).sort();
    expect(created).toEqual(orders.map((o) => o.orderNumber).sort());
    const report = await h.report(file);
    expect(report.finishedAt).not.toBeNull();
    expect(
      report.jobs.every((j) => j.jobNumber !== null && (j.status === 'submitted' || j.status === 'already-submitted')),
    ).toBe(true);
    // Jobs created before the kill (including any whose answer never arrived) are reported, not resent.
    expect(report.jobs.filter((j) => j.status === 'already-submitted').length).toBeGreaterThanOrEqual(
      createdAtKill > 0 ? 1 : 0,
    );
  }, 60_000);
});
