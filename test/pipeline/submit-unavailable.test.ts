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
