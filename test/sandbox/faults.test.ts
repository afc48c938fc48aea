import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { Caller, start, tokenFor, usJob } from '../support/sandbox-http.js';

let sb: Sandbox;
let us: Caller;
beforeAll(async () => {
  sb = await start();
});
afterAll(() => sb.close());
beforeEach(async () => {
  await sb.admin.reset();
  us = new Caller(sb, 'us-demo');
  await us.get('/account'); // fetch the token before faults are set
  await sb.admin.resetCalls();
});

describe('admin: call counts', () => {
  it('counts calls per route template, summed over regions, including the token call', async () => {
    await us.get('/Lookups/countries');
    await us.get('/Lookups/countries');
    await us.get(`/PriceCodes/${encodeURIComponent('DTF Full Color 10" x 10"')}`);
    await new Caller(sb, 'nz-demo').get('/Lookups/countries');
    const calls = await sb.admin.calls();
    expect(calls['GET /Lookups/countries']).toBe(3);
    expect(calls['GET /PriceCodes/{priceCode}']).toBe(1);
    expect(calls['POST token']).toBe(1);
    await sb.admin.resetCalls();
    expect(await sb.admin.calls()).toEqual({});
  });
});

describe('admin: fault injection', () => {
  it('status 429 with Retry-After, then the rule is spent (times)', async () => {
    await sb.admin.setFaults([
      { route: 'GET /Lookups/countries', kind: 'status', status: 429, retryAfterSeconds: 7, times: 1 },
    ]);
    const r = await us.get('/Lookups/countries');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(r.body.status).toBe(429);
    expect((await us.get('/Lookups/countries')).status).toBe(200);
    // Other routes are untouched.
    expect((await us.get('/Lookups/job-statuses')).status).toBe(200);
  });

  it('status 500, 502, 503', async () => {
    for (const status of [500, 502, 503] as const) {
      await sb.admin.setFaults([{ route: '*', kind: 'status', status }]);
      expect((await us.get('/account')).status).toBe(status);
    }
    await sb.admin.clearFaults();
    expect((await us.get('/account')).status).toBe(200);
  });

  it('when: a POST /Jobs rule can aim at creates only, sparing validateOnly dry runs', async () => {
    await sb.admin.setFaults([{ route: 'POST /Jobs', kind: 'status', status: 503, when: 'create', times: 1 }]);
    const dry = await us.post('/Jobs', usJob({ orderNumber: 'PO-WHEN', validateOnly: true }));
    expect(dry.status).toBe(200);
    expect((await us.post('/Jobs', usJob({ orderNumber: 'PO-WHEN' }))).status).toBe(503);
    expect((await us.post('/Jobs', usJob({ orderNumber: 'PO-WHEN' }))).status).toBe(201);
    await sb.admin.clearFaults();
    const bad = await fetch(`${sb.url}/_sandbox/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ route: 'POST /Jobs', kind: 'reset', when: 'sometimes' }] }),
    });
    expect(bad.status).toBe(400);
  });

  it('reset destroys the connection before acting: no job is created', async () => {
    await sb.admin.setFaults([{ route: 'POST /Jobs', kind: 'reset' }]);
    await expect(us.post('/Jobs', usJob())).rejects.toThrow();
    expect(await sb.admin.jobs()).toEqual([]);
    expect((await sb.admin.calls())['POST /Jobs']).toBe(1);
  });

  it('create-then-drop creates the job and never answers', async () => {
    await sb.admin.setFaults([{ route: 'POST /Jobs', kind: 'create-then-drop', times: 1 }]);
    await expect(us.post('/Jobs', usJob({ orderNumber: 'PO-DROP' }))).rejects.toThrow();
    const jobs = await sb.admin.jobs();
    expect(jobs.map((j) => j.orderNumber)).toEqual(['PO-DROP']);
    // The client can settle the doubt by searching.
    const found = (await us.get('/Jobs/active?searchText=PO-DROP&includeClosedJobs=true')).body.items;
    expect(found.map((j: any) => j.jobNumber)).toEqual([jobs[0].jobNumber]);
  });

  it('create-then-500 creates the job and answers 500', async () => {
    await sb.admin.setFaults([{ route: 'POST /Jobs', kind: 'create-then-500' }]);
    const r = await us.post('/Jobs', usJob({ orderNumber: 'PO-500' }));
    expect(r.status).toBe(500);
    expect((await sb.admin.jobs()).map((j) => j.orderNumber)).toEqual(['PO-500']);
  });

  it('latency delays the answer (rule fires and the call still succeeds)', async () => {
    await sb.admin.setFaults([{ route: 'GET /account', kind: 'latency', latencyMs: 30, jitterMs: 10 }]);
    const r = await us.get('/account');
    expect(r.status).toBe(200);
    const rules = (await (await fetch(`${sb.url}/_sandbox/faults`)).json()) as { fired: number }[];
    expect(rules[0].fired).toBe(1);
  });

  it('faults on the token endpoint', async () => {
    await sb.admin.setFaults([{ route: 'token', kind: 'status', status: 503 }]);
    await expect(tokenFor(sb, 'us-demo')).rejects.toThrow(/503/);
  });

  it('probability is drawn from the fault seed: the same seed repeats the same pattern', async () => {
    const pattern = async (seed: number): Promise<number[]> => {
      await sb.admin.setFaults(
        [{ route: 'GET /Lookups/size-sets', kind: 'status', status: 503, probability: 0.5 }],
        seed,
      );
      const out: number[] = [];
      for (let i = 0; i < 16; i++) out.push((await us.get('/Lookups/size-sets')).status);
      return out;
    };
    const a = await pattern(42);
    const b = await pattern(42);
    expect(a).toEqual(b);
    expect(a).toContain(503);
    expect(a).toContain(200);
  });

  it('rejects malformed rules', async () => {
    await expect(sb.admin.setFaults([{ route: 'POST /Jobs', kind: 'explode' as never }])).rejects.toThrow(/400/);
    await expect(sb.admin.setFaults([{ route: '*', kind: 'status', status: 418 as never }])).rejects.toThrow(/400/);
  });
});

describe('admin: reset', () => {
  it('forgets created jobs and new assets', async () => {
    await us.post('/Jobs', usJob());
    expect((await sb.admin.jobs()).length).toBe(1);
    await sb.admin.reset();
    expect(await sb.admin.jobs()).toEqual([]);
    expect((await us.get('/Jobs/active')).body.totalCount).toBe(0);
    expect((await us.post('/Jobs', usJob())).body.jobNumber).toBe(700001);
  });
});
