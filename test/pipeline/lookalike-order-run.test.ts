import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * A create whose answer is lost, and the API keeps the job's order number in another letter
 * case than it was sent (the spec leaves that open): the next run's settle search meets only
 * the other spelling. The order must be held in doubt, naming the job, never created again.
 */

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

/** The job's order number as the API might have stored it, set through the API's own PATCH. */
async function respell(jobNumber: number, orderNumber: string): Promise<void> {
  const client = createApiClient(sandboxConfig(h.sandbox, 'us-demo', { stateDir: h.stateDir }));
  try {
    await client.jobs.patch(jobNumber, { orderNumber });
  } finally {
    await client.close();
  }
}

describe('a lost create whose job the account spells in another case', () => {
  it('is held in doubt by the next run, the job named, and not sent again', async () => {
    const first = await h.write('first.yaml', manifest([{ orderNumber: 'po-e0', items: ITEMS.reorder }]));
    expect((await h.cli('run', [first])).code).toBe(0);
    // Created, its answer lost, and the search that would settle it fails: an intent is left.
    await h.sandbox.admin.setFaults([
      { route: 'POST /Jobs', kind: 'create-then-drop', when: 'create', times: 1 },
      { route: 'GET /Jobs/active', kind: 'status', status: 503, retryAfterSeconds: 0 },
    ]);
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'po-e1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file])).code).toBe(3);
    await h.sandbox.admin.clearFaults();
    const made = (await h.sandbox.admin.jobs()).find((j) => j.orderNumber === 'po-e1');
    if (!made) throw new Error('the dropped create made no job');
    await respell(made.jobNumber, 'PO-E1');
    await h.sandbox.admin.resetCalls();

    const again = await h.cli('run', [file]);
    expect((await h.sandbox.admin.calls())['POST /Jobs'] ?? 0).toBe(0);
    expect(again.code).toBe(1);
    const job = (await h.report(file)).jobs[0]!;
    expect(job.status).toBe('in-doubt');
    const message = job.errors.find((e) => e.code === 'run.lookalike-order')?.message;
    expect(message).toContain(`job ${made.jobNumber} (order number "PO-E1")`);
    expect(message).toContain('order "po-e1" was not sent');
  }, 60_000);
});
