import { spawn } from 'node:child_process';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
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
function htorder(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: h.workDir,
    env: { ...process.env, ...h.env(), HTORDER_CONCURRENCY: '3', HTORDER_LOCK_STALE_MS: '2000', ...env },
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

describe('kill -9 with the suspected-duplicate check on (its default window)', () => {
  // Twelve orders of one file with one content: an uninterrupted run sends them all (exit 0).
  const env = { HTORDER_DUPLICATE_WINDOW: '12h' };
  const orders = Array.from({ length: 12 }, (_, i) => ({ orderNumber: `SAME-${i + 1}`, items: ITEMS.reorder }));

  /** How many orders the ledger's content index records as sent (all twelve share one entry). */
  async function indexed(): Promise<number> {
    const names = await readdir(h.stateDir, { recursive: true }).catch(() => [] as string[]);
    const note = names.find((n) => n.split('/').pop()?.startsWith('.content-') && !n.endsWith('.tmp'));
    if (!note) return 0;
    const text = await readFile(join(h.stateDir, note), 'utf8').catch(() => '');
    return (text.match(/"orderNumber"/g) ?? []).length;
  }

  /** Runs the file and kills the run once some of its orders are sent and in the content index; how many were created. */
  async function killedRun(file: string): Promise<number> {
    await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'latency', latencyMs: 150 }]);
    const first = htorder(['run', file], env);
    while ((await indexed()) < 2) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    await first.exited;
    await h.sandbox.admin.clearFaults();
    return (await h.sandbox.admin.jobs()).length;
  }

  it('a re-run of the file decides as the uninterrupted run: the rest are sent, none held as duplicates of the sent ones', async () => {
    const file = await h.write('same.yaml', manifest(orders));
    expect(await killedRun(file)).toBeLessThan(12);
    const second = htorder(['run', file], env);
    expect(await second.exited).toBe(0);
    const created = (await h.sandbox.admin.jobs()).map((j) => j.orderNumber).sort();
    expect(created).toEqual(orders.map((o) => o.orderNumber).sort());
  }, 60_000);

  it('so does the same bytes dropped again under another name', async () => {
    const file = await h.write('same.yaml', manifest(orders));
    expect(await killedRun(file)).toBeLessThan(12);
    const copy = `${h.workDir}/same (copy).yaml`;
    await copyFile(file, copy);
    const second = htorder(['run', copy], env);
    expect(await second.exited).toBe(0);
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual(
      orders.map((o) => o.orderNumber).sort(),
    );
  }, 60_000);

  it('killed while its create is on the wire: the order sent is in the index, and a re-send from another input waits', async () => {
    const one = (orderNumber: string) => manifest([{ orderNumber, items: ITEMS.reorder }]);
    const file = await h.write('night.yaml', one('NIGHT-1'));
    // The create is answered late: the run is killed after sending it, before any answer.
    await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'latency', latencyMs: 1500 }]);
    const first = htorder(['run', file], env);
    // One dry run, then the create.
    while (((await h.sandbox.admin.calls())['POST /Jobs'] ?? 0) < 2) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    await first.exited;
    while ((await h.sandbox.admin.jobs()).length < 1) await new Promise((r) => setTimeout(r, 20));
    await h.sandbox.admin.clearFaults();
    const resend = await h.write('night-again.yaml', one('NIGHT-1-AGAIN'));
    const second = htorder(['run', resend], env);
    expect(await second.exited).toBe(4);
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['NIGHT-1']);
    // The killed run's re-run settles its order by search and sends nothing new.
    expect(await htorder(['run', file], env).exited).toBe(0);
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['NIGHT-1']);
  }, 60_000);

  it('an order proven not created leaves the index: a later order of its content is sent', async () => {
    const one = (orderNumber: string) => manifest([{ orderNumber, items: ITEMS.reorder }]);
    await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'status', status: 500 }]);
    const refused = await h.write('refused.yaml', one('REFUSED-1'));
    // Every create answered 500 and the account searched: nothing exists (an outage, exit 3).
    expect(await htorder(['run', refused], env).exited).toBe(3);
    expect(await indexed()).toBe(0);
    await h.sandbox.admin.clearFaults();
    const later = await h.write('later.yaml', one('LATER-1'));
    expect(await htorder(['run', later], env).exited).toBe(0);
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['LATER-1']);
  }, 60_000);
});
