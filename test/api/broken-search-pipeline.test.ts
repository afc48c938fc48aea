import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { startSandboxProxy } from '../support/sandbox-proxy.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * `htorder run` against the real sandbox through a loopback proxy: a create's answer is lost
 * (the job exists), and the search that settles it answers the job with a job number the
 * client cannot use. The order is in doubt (exit 3): neither recorded as submitted with that
 * number nor sent again; once the search answers properly, it is found, never created twice.
 */
let h: PipelineHarness;
let proxy: Awaited<ReturnType<typeof startSandboxProxy>>;
/** What each job's number becomes in GET /Jobs/active answers (undefined: left as it is). */
let breakNumber: ((n: number) => unknown) | undefined;
/** Creates whose answer is lost: the job is made, the connection dropped before its answer. */
let dropCreates = 0;

beforeAll(async () => {
  h = await PipelineHarness.start();
  proxy = await startSandboxProxy(h, {
    reply: (x, sandbox, res) => {
      if (x.jobsPost?.validateOnly === false && sandbox.ok && dropCreates > 0) {
        dropCreates--;
        res.socket?.destroy();
        return true;
      }
      if (!x.url.includes('/Jobs/active') || !sandbox.ok || !breakNumber) return false;
      const envelope = JSON.parse(sandbox.text) as { items: { jobNumber: unknown }[] };
      for (const job of envelope.items) job.jobNumber = breakNumber(job.jobNumber as number);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(envelope));
      return true;
    },
  });
});
afterAll(async () => {
  await proxy.close();
  await h.close();
});
beforeEach(async () => {
  breakNumber = undefined;
  dropCreates = 0;
  await h.reset();
});

const BROKEN: Array<[string, (n: number) => unknown]> = [
  ['a string', (n) => String(n)],
  ['null', () => null],
  ['a fraction', (n) => n + 0.5],
  ['a huge number', () => 2 ** 70],
];

describe('htorder run: a settle search whose job has no usable job number leaves the order in doubt', () => {
  for (const [name, broken] of BROKEN) {
    it(`${name}: exit 3, in doubt, not submitted; the next good search finds the one job`, async () => {
      dropCreates = 1;
      breakNumber = broken;
      const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-SEARCH-1', items: ITEMS.reorder }]));
      const first = await h.cli('run', [file], { env: proxy.env() });
      expect(first.stderr).not.toContain('TypeError');
      expect(first.code).toBe(3);
      const report = await h.report(file);
      expect(report.jobs[0]).toMatchObject({ status: 'in-doubt' });
      expect(JSON.stringify(report.jobs[0])).toContain('GET /Jobs/active');
      expect(await h.sandbox.admin.jobs()).toHaveLength(1);

      breakNumber = undefined;
      const second = await h.cli('run', [file], { env: proxy.env() });
      expect(second.code).toBe(0);
      const created = await h.sandbox.admin.jobs();
      expect(created).toHaveLength(1);
      expect((await h.report(file)).jobs[0]).toMatchObject({
        status: 'already-submitted',
        jobNumber: created[0]?.jobNumber,
      });
    });
  }
});
