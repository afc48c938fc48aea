import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { JobCandidate } from '../../src/api/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log/logger.js';
import { submitJob } from '../../src/pipeline/submit-job.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { isTokenRequest, json, loopbackConfig, startLoopback, tokenReply } from '../support/loopback-server.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { startSandboxProxy } from '../support/sandbox-proxy.js';
import { usJob } from '../support/sandbox-http.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * The spec says a `validateOnly` POST /Jobs creates nothing, and does not show its success
 * answer. `htorder run` dry-runs every job before its create, so an API (or a gateway before
 * it) that drops the flag would get every order twice. Here a loopback proxy sends each dry run
 * to the real sandbox as a create and passes its 201 back: the order, searched for before its
 * create, is that job, recorded and never sent again. A proxy that only adds a job number to the
 * sandbox's dry-run answer (no job made) must not cost the order: each is sent once.
 */
let h: PipelineHarness;
let proxy: Awaited<ReturnType<typeof startSandboxProxy>>;
/** What the proxy makes of a dry run: a create, or the sandbox's own answer with a job number added. */
let dryRuns: 'create' | 'phantom' = 'create';

beforeAll(async () => {
  h = await PipelineHarness.start();
  proxy = await startSandboxProxy(h, {
    send: (x) =>
      x.jobsPost?.validateOnly && dryRuns === 'create'
        ? Buffer.from(JSON.stringify({ ...JSON.parse(x.body.toString()), validateOnly: false }))
        : x.body,
    reply: (x, sandbox, res) => {
      if (!x.jobsPost?.validateOnly || dryRuns !== 'phantom' || !sandbox.ok) return false;
      json(res, sandbox.status, { message: 'Validated with NO Errors. Job NOT created.', jobNumber: 999999 });
      return true;
    },
  });
});
afterAll(async () => {
  await proxy.close();
  await h.close();
});
beforeEach(async () => {
  await h.reset();
  dryRuns = 'create';
});

const viaProxy = (): Record<string, string> => proxy.env();

describe('an API that creates a job in answer to a validateOnly dry run', () => {
  it('run: the job it made is the order, recorded and reported with a warning; nothing is sent twice', async () => {
    const file = await h.write(
      'order.yaml',
      manifest([
        { orderNumber: 'PO-VAL-1', items: ITEMS.reorder },
        { orderNumber: 'PO-VAL-2', items: ITEMS.reorder },
      ]),
    );
    const first = await h.cli('run', [file], { env: viaProxy() });
    const created = await h.sandbox.admin.jobs();
    expect(created.map((j) => j.orderNumber).sort()).toEqual(['PO-VAL-1', 'PO-VAL-2']);
    const report = await h.report(file);
    for (const order of ['PO-VAL-1', 'PO-VAL-2']) {
      const job = report.jobs.find((j) => j.orderNumber === order);
      expect(job).toMatchObject({
        status: 'submitted',
        jobNumber: created.find((j) => j.orderNumber === order)?.jobNumber,
      });
    }
    expect(first.stderr + first.stdout).toContain('validateOnly');
    expect(first.code).toBe(0);

    const again = await h.cli('run', [file], { env: viaProxy() });
    expect(await h.sandbox.admin.jobs()).toHaveLength(2);
    expect((await h.report(file)).jobs.map((j) => j.status)).toEqual(['already-submitted', 'already-submitted']);
    expect(again.code).toBe(0);
  });

  it('run: a dry run answered with a job number the account does not have is no order: each is sent once', async () => {
    dryRuns = 'phantom';
    const file = await h.write(
      'phantom.yaml',
      manifest([
        { orderNumber: 'PO-VAL-5', items: ITEMS.reorder },
        { orderNumber: 'PO-VAL-6', items: ITEMS.reorder },
      ]),
    );
    const first = await h.cli('run', [file], { env: viaProxy() });
    const created = await h.sandbox.admin.jobs();
    expect(created.map((j) => j.orderNumber).sort()).toEqual(['PO-VAL-5', 'PO-VAL-6']);
    const report = await h.report(file);
    expect(report.jobs.map((j) => [j.status, j.jobNumber])).toEqual(
      ['PO-VAL-5', 'PO-VAL-6'].map((o) => ['submitted', created.find((j) => j.orderNumber === o)?.jobNumber]),
    );
    expect(first.code).toBe(0);
  });

  it('plan: the job it made is recorded, so a run after it sends nothing', async () => {
    const file = await h.write(
      'plan.yaml',
      manifest([
        { orderNumber: 'PO-VAL-3', items: ITEMS.reorder },
        { orderNumber: 'PO-VAL-4', items: ITEMS.reorder },
      ]),
    );
    await h.cli('plan', [file], { env: viaProxy() });
    expect(await h.sandbox.admin.jobs()).toHaveLength(2);
    await h.cli('run', [file], { env: viaProxy() });
    expect(await h.sandbox.admin.jobs()).toHaveLength(2);
    expect((await h.report(file)).jobs.map((j) => j.status)).toEqual(['already-submitted', 'already-submitted']);
  });
});

describe('a create answered 500, then a validateOnly check answered with a job number', () => {
  /** An API whose create answers 500 and whose check answers 201 with job 77, made (`makes`) or not. */
  async function submitAgainst(makes: boolean) {
    let tokens = 0;
    const made: number[] = [];
    const api = await startLoopback((req, res) => {
      if (isTokenRequest(req)) return tokenReply(res, ++tokens);
      if (req.url.startsWith('/api/Jobs/active')) {
        const items = made.map((jobNumber) => ({ jobNumber, orderNumber: 'PO-500', dateDue: null, tracking: [] }));
        return json(res, 200, { items, totalCount: items.length, pageNumber: 1, pageSize: 100, totalPages: 1 });
      }
      if (req.method === 'POST' && req.url === '/api/Jobs') {
        if (JSON.parse(req.body).validateOnly !== true) return json(res, 500, { title: 'Server error' });
        if (makes) made.push(77);
        return json(res, 201, { jobNumber: 77, totalJobCost: 12, jobLineDetails: [] });
      }
      json(res, 404, { title: 'Not found' });
    });
    const stateDir = await mkdtemp(join(tmpdir(), 'htorder-validate-creates-'));
    const client = createApiClient(loopbackConfig(api.url), {
      retry: { baseDelayMs: 1, maxDelayMs: 1 },
      sleep: async () => undefined,
    });
    try {
      const outcome = await submitJob(
        {
          client,
          ledger: new FolderLedger(stateDir),
          account: 'loopback/1',
          input: { file: 'orders.yaml', sha256: '0'.repeat(64) },
          logger: silentLogger(),
          clock: systemClock,
        },
        { orderNumber: 'PO-500', hash: 'h', candidate: usJob({ orderNumber: 'PO-500' }) as JobCandidate },
      );
      const posts = api.seen.filter((r) => r.method === 'POST' && r.url === '/api/Jobs');
      return { outcome, posts: posts.map((r) => JSON.parse(r.body).validateOnly) };
    } finally {
      await client.close();
      await api.close();
    }
  }

  it('the job the check made is found by search and recorded, instead of the order sent again', async () => {
    const { outcome, posts } = await submitAgainst(true);
    expect(outcome).toMatchObject({ status: 'submitted', entry: { state: 'submitted', jobNumber: 77 } });
    expect(posts).toEqual([false, true]);
  });

  it('a job number the account does not have is no order: it is sent again, as after any 500', async () => {
    const { outcome, posts } = await submitAgainst(false);
    expect(outcome.status).not.toBe('submitted');
    expect(posts.filter((p) => p === false).length).toBeGreaterThan(1);
  });
});
