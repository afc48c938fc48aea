import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ActiveJobDto, ActiveJobsEnvelope } from '../../src/api/types.js';
import { findOtherWriter } from '../../src/pipeline/other-writers.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { raw, tokenFor } from '../support/sandbox-http.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * A ledger that vouches for an account notices another writer to it (two hosts, each with
 * its own state dir): at the start of each run it reads the account's newest jobs, and a job
 * made through the API since it last looked that it does not know makes it stop vouching —
 * the orders it has not seen are searched, and the warning says to share the ledger.
 */

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

/** `htorder run FILE` as the host whose state dir is `stateDir`, with its warnings. */
async function runOn(stateDir: string, file: string) {
  const out = await h.cli('run', [file], {
    json: true,
    env: { HTORDER_STATE_DIR: stateDir, HTORDER_LOG_LEVEL: 'warn' },
  });
  const summary = JSON.parse(out.stdout) as { inputs: { jobs: { status: string; jobNumber: number | null }[] }[] };
  return { ...out, jobs: summary.inputs[0]!.jobs };
}

const calls = async (route: string): Promise<number> => (await h.sandbox.admin.calls())[route] ?? 0;

describe('two hosts, each with its own ledger, on one account', () => {
  it('the failover host notices the other writer and creates none of its orders again', async () => {
    const hostB = await mkdtemp(join(tmpdir(), 'htorder-host-b-'));
    const hostA = await mkdtemp(join(tmpdir(), 'htorder-host-a-'));
    // Host B has worked for the account before: its ledger vouches for it.
    expect((await runOn(hostB, await h.write('b-1.yaml', manifest('B', 3)))).code).toBe(0);
    expect((await runOn(hostB, await h.write('b-2.yaml', manifest('BB', 1)))).code).toBe(0);
    expect(await new FolderLedger(hostB).readAccount(await accountOf(hostB))).toBeDefined();
    // Then host A sends the night's file…
    const night = await h.write('night.yaml', manifest('N', 20));
    const a = await runOn(hostA, night);
    expect(a.jobs.map((j) => j.status)).toEqual(Array(20).fill('submitted'));
    const made = (await h.sandbox.admin.jobs()).length;

    // …and host B, failing over, runs it again: every order is already there.
    const b = await runOn(hostB, night);
    expect(b.jobs.map((j) => j.status)).toEqual(Array(20).fill('already-submitted'));
    expect(b.jobs.map((j) => j.jobNumber)).toEqual(a.jobs.map((j) => j.jobNumber));
    expect(await h.sandbox.admin.jobs()).toHaveLength(made);
    expect(b.stderr).toContain('another host or state dir sends orders to this account');
    expect(b.stderr).toContain('share one ledger');
    const record = await new FolderLedger(hostB).readAccount(await accountOf(hostB));
    expect(record?.otherWriter).toMatchObject({ orderNumber: expect.stringMatching(/^N-/) });

    // From then on host B looks for every order it has not seen, and still sends each once.
    await h.sandbox.admin.resetCalls();
    const next = await runOn(hostB, await h.write('b-3.yaml', manifest('C', 2)));
    expect(next.jobs.map((j) => j.status)).toEqual(['submitted', 'submitted']);
    expect(await calls('GET /Jobs/active')).toBeGreaterThanOrEqual(1);
    expect(await h.sandbox.admin.jobs()).toHaveLength(made + 2);
  }, 60_000);

  it('costs a vouching run one page of the account, and a job made in the dashboard is no other writer', async () => {
    const host = await mkdtemp(join(tmpdir(), 'htorder-host-'));
    await runOn(host, await h.write('first.yaml', manifest('F', 2)));
    await runOn(host, await h.write('second.yaml', manifest('S', 1)));
    // Someone orders by hand in the dashboard: the job's origin is not the API.
    await dashboardOrder('BY-HAND-1');
    await h.sandbox.admin.resetCalls();
    const run = await runOn(host, await h.write('third.yaml', manifest('T', 3)));
    expect(run.jobs.map((j) => j.status)).toEqual(Array(3).fill('submitted'));
    expect(run.stderr).not.toContain('another host');
    // One page of the account's newest jobs, no job read, no search: it still vouches.
    expect(await calls('GET /Jobs/active')).toBe(1);
    expect(await calls('GET /Jobs/{jobNumber}')).toBe(0);
    expect((await new FolderLedger(host).readAccount(await accountOf(host)))?.otherWriter).toBeUndefined();
  }, 60_000);

  it("resolves the run's first new order while the look for other writers is under way", async () => {
    const host = await mkdtemp(join(tmpdir(), 'htorder-host-'));
    await runOn(host, await h.write('first.yaml', manifest('F', 2)));
    await runOn(host, await h.write('second.yaml', manifest('S', 1)));
    await lookedUpMeanwhile(host, await h.write('third.yaml', manifest('T', 2)));
  }, 60_000);

  it("resolves a new ledger's first order while the account's jobs are listed", async () => {
    const host = await mkdtemp(join(tmpdir(), 'htorder-host-'));
    await lookedUpMeanwhile(host, await h.write('first.yaml', manifest('F', 2)));
  }, 60_000);
});

/**
 * Runs the two orders of `file` on `host` with the account's jobs answered only after 4 s: the
 * first job's catalogue lookups must be asked before that answer, no POST before it.
 */
async function lookedUpMeanwhile(host: string, file: string): Promise<void> {
  await h.sandbox.admin.resetCalls();
  await h.sandbox.admin.setFaults([{ route: 'GET /Jobs/active', kind: 'latency', latencyMs: 4000 }]);
  const running = runOn(host, file);
  const asked = await waitFor(async () => (await calls('GET /Jobs/active')) > 0, 20_000);
  const lookups = async () =>
    Object.entries(await h.sandbox.admin.calls())
      .filter(([route]) => route.startsWith('GET ') && route !== 'GET /Jobs/active' && route !== 'GET /account')
      .reduce((sum, [, n]) => sum + n, 0);
  await waitFor(async () => (await lookups()) > 0, 2_000);
  // Still within the 4 s: what was asked meanwhile did not wait for the answer.
  expect(Date.now() - asked).toBeLessThan(3_500);
  expect(await lookups()).toBeGreaterThan(0);
  expect(await calls('POST /Jobs')).toBe(0);
  const run = await running;
  expect(run.jobs.map((j) => j.status)).toEqual(['submitted', 'submitted']);
  expect(await calls('POST /Jobs')).toBe(4);
}

/** When `ready` first holds, polled every 20 ms for at most `ms`: the time it held (Date.now()), or the last poll's. */
async function waitFor(ready: () => Promise<boolean>, ms: number): Promise<number> {
  const until = Date.now() + ms;
  while (!(await ready()) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return Date.now();
}

/** The one account key a host's ledger holds. */
async function accountOf(stateDir: string): Promise<string> {
  for await (const entry of new FolderLedger(stateDir).entries()) return entry.account;
  throw new Error(`no entries in ${stateDir}`);
}

/** A job made as the dashboard makes it (origin WEB), for an order no ledger knows. */
async function dashboardOrder(orderNumber: string): Promise<void> {
  const account = h.sandbox.accounts.find((a) => a.name === 'us-demo')!;
  const region = h.sandbox.regions[account.region]!;
  const token = await tokenFor(h.sandbox, 'us-demo');
  const res = await raw(`${region.baseUrl}/Jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-application-name': 'WEB' },
    body: JSON.stringify({ ...(await lastRequest()), orderNumber }),
  });
  expect(res.status, res.text).toBe(201);
}

/** The body of the last job htorder created, to send another like it. */
async function lastRequest(): Promise<Record<string, unknown>> {
  const created = await h.sandbox.admin.jobs();
  if (created.length === 0) throw new Error('no job created yet');
  return created[created.length - 1]!.request as Record<string, unknown>;
}

describe('findOtherWriter', () => {
  const job = (jobNumber: number, orderNumber: string, originCode: string | null = 'API') =>
    ({ jobNumber, orderNumber, originCode }) as ActiveJobDto;
  /** Pages of `jobs`, newest first, `size` a page. */
  const pages = (jobs: ActiveJobDto[], size: number, asked: number[]) => async (page: number) => {
    asked.push(page);
    const items = jobs.slice((page - 1) * size, page * size);
    return { items, hasNextPage: page * size < jobs.length, totalCount: jobs.length } as ActiveJobsEnvelope;
  };
  async function ledgerKnowing(orders: [string, number][]) {
    const ledger = new FolderLedger(await tempDirPerTest('htorder-writers-'));
    for (const [orderNumber, jobNumber] of orders)
      await ledger.write(
        {
          ledgerVersion: 1,
          account: 'acct',
          orderNumber,
          payloadHash: 'h',
          state: 'submitted',
          attempts: 1,
          intentAt: '2030-01-01T00:00:00Z',
          jobNumber,
        },
        { guard: null },
      );
    return ledger;
  }
  const noJob = async () => {
    throw new Error('not asked for');
  };

  it('reads down to the job it saw last, and only that far', async () => {
    const ledger = await ledgerKnowing([
      ['A', 105],
      ['B', 104],
      ['C', 103],
    ]);
    const asked: number[] = [];
    const listing = [job(105, 'A'), job(104, 'B'), job(103, 'C'), job(102, 'OLD'), job(101, 'OLDER')];
    const found = await findOtherWriter(
      { fetchPage: pages(listing, 2, asked), job: noJob, ledger, account: 'acct' },
      { checkedThrough: 102 },
    );
    expect(found).toEqual({ newest: 105, complete: true, calls: 2 });
    expect(asked).toEqual([1, 2]);
  });

  it('tells a job it does not know, or one it knows as another job, made through the API; not one made elsewhere', async () => {
    const ledger = await ledgerKnowing([['A', 105]]);
    const check = (listing: ActiveJobDto[]) =>
      findOtherWriter(
        { fetchPage: pages(listing, 100, []), job: noJob, ledger, account: 'acct' },
        { checkedThrough: 100 },
      );
    expect((await check([job(106, 'X', 'WEB'), job(105, 'A')])).other).toBeUndefined();
    expect((await check([job(106, null as unknown as string), job(105, 'A')])).other).toBeUndefined();
    expect((await check([job(106, 'X'), job(105, 'A')])).other).toMatchObject({ jobNumber: 106 });
    expect((await check([job(107, 'A'), job(105, 'A')])).other).toMatchObject({ jobNumber: 107 });
    expect((await check([job(106, 'Y', null), job(105, 'A')])).other).toMatchObject({ jobNumber: 106 });
  });

  it('without a last look, asks when the newest unknown job was made: since the ledger vouched, or before', async () => {
    const ledger = await ledgerKnowing([['A', 105]]);
    const listing = [job(106, 'X'), job(105, 'A'), job(90, 'OLD')];
    const asked: number[] = [];
    const made = (dateIn: string | null) => async (n: number) => {
      asked.push(n);
      return { jobNumber: n, dateIn } as never;
    };
    const since = { vouchedSince: '2030-01-02T00:00:00.000Z' };
    const check = (dateIn: string | null) =>
      findOtherWriter({ fetchPage: pages(listing, 100, []), job: made(dateIn), ledger, account: 'acct' }, since);
    expect(await check('2030-01-01T10:00:00')).toEqual({ newest: 106, complete: true, calls: 2 });
    expect((await check('2030-01-02T10:00:00')).other).toMatchObject({ jobNumber: 106 });
    expect((await check(null)).other).toMatchObject({ jobNumber: 106 });
    expect(asked).toEqual([106, 106, 106]);
  });

  it('stops at its page limit, saying it did not see everything', async () => {
    const ledger = await ledgerKnowing([]);
    const many = Array.from({ length: 250 }, (_, i) => job(10_000 - i, `O-${i}`, 'WEB'));
    const found = await findOtherWriter(
      { fetchPage: pages(many, 1, []), job: noJob, ledger, account: 'acct' },
      { checkedThrough: 1 },
    );
    expect(found).toMatchObject({ complete: false, newest: 10_000, calls: 200 });
  });
});
