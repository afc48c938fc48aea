import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * Regression (found by the chaos suite's reasoning, issue 7): a create refused before acting
 * — 503, 429, a reset — on every one of the run's sends is the API being unavailable, not
 * the job being wrong. It must end as exit 3 ("nothing decided, retry later"; a watcher
 * retries the file) and never as exit 1 / failed/ (which tells the user to fix the manifest).
 */

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

describe('a create that keeps being refused before acting', () => {
  it.each([
    ['503', { kind: 'status', status: 503, retryAfterSeconds: 0 }],
    ['429', { kind: 'status', status: 429, retryAfterSeconds: 0 }],
    ['reset', { kind: 'reset' }],
  ] as const)(
    '%s on every send: exit 3, nothing created, and a re-run submits it once',
    async (_name, fault) => {
      await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', times: 3, ...fault }]);
      const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-U1', items: ITEMS.reorder }]));
      const first = await h.cli('run', [file]);
      expect(first.code).toBe(3);
      expect(await h.sandbox.admin.jobs()).toEqual([]);
      expect((await h.report(file)).jobs[0]!.status).toBe('failed');

      const second = await h.cli('run', [file]);
      expect(second.code).toBe(0);
      expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['PO-U1']);
    },
    30_000,
  );
});

describe('an order left in doubt that the next run still cannot search', () => {
  it('is in doubt again, exit 3 (the API unavailable), never exit 1; settled once the search works', async () => {
    // A first order lets the ledger vouch for the account: the next one is not searched before its create.
    const first = await h.write('first.yaml', manifest([{ orderNumber: 'PO-D0', items: ITEMS.reorder }]));
    expect((await h.cli('run', [first])).code).toBe(0);
    // Created, its answer lost, and the search that would settle it fails: in doubt.
    await h.sandbox.admin.setFaults([
      { route: 'POST /Jobs', kind: 'create-then-drop', when: 'create', times: 1 },
      { route: 'GET /Jobs/active', kind: 'status', status: 503, retryAfterSeconds: 0 },
    ]);
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-D1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file])).code).toBe(3);
    // The next run finds the intent and still cannot search: the same answer, not "fix the manifest".
    const again = await h.cli('run', [file]);
    expect((await h.report(file)).jobs[0]!.status).toBe('in-doubt');
    expect(again.code).toBe(3);
    await h.sandbox.admin.clearFaults();
    expect((await h.cli('run', [file])).code).toBe(0);
    expect((await h.report(file)).jobs[0]!.status).toBe('already-submitted');
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual(['PO-D0', 'PO-D1']);
  }, 60_000);
});
