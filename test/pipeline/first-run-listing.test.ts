import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActiveJobDto, ActiveJobsEnvelope } from '../../src/api/types.js';
import { listAccount, listingBudget } from '../../src/pipeline/find-submitted.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * A ledger that cannot vouch for the account (a fresh state dir) checks the orders it has never
 * seen on the account before anything is spent on them: by one listing of the account's jobs
 * when it has fewer pages than there are orders, else by a search per order. The account here
 * holds 250 jobs made earlier through the sandbox (three pages of 100, newest first) plus the
 * sandbox's closed history, so an order can sit on any page; each test runs a fresh ledger over
 * it, with order numbers of its own, and the sandbox's record of created jobs is the count.
 */

const OLD = 250;
let h: PipelineHarness;

beforeAll(async () => {
  h = await PipelineHarness.start();
  await h.reset();
  const seed = await h.write('seed.yaml', manifest('OLD', OLD));
  const r = await h.cli('run', [seed]);
  expect(r.code, r.stderr).toBe(0);
}, 120_000);
afterAll(async () => h.close());

/** A fresh ledger runs these orders (asset reorders); the calls of that run and its report. */
async function firstRun(name: string, orders: string[]) {
  const file = await h.write(
    `${name}.yaml`,
    manifest(orders.map((orderNumber) => ({ orderNumber, items: ITEMS.reorder }))),
  );
  await h.sandbox.admin.resetCalls();
  const stateDir = await mkdtemp(join(tmpdir(), 'htorder-first-run-'));
  const r = await h.cli('run', [file], { env: { HTORDER_STATE_DIR: stateDir } });
  expect(r.code, r.stderr).toBe(0);
  const calls = await h.sandbox.admin.calls();
  const report = await h.report(file);
  const status = Object.fromEntries(report.jobs.map((j) => [j.orderNumber, j.status]));
  return { calls, status };
}

/** Every order number of the account has exactly one job. */
async function expectOneJobPerOrder(): Promise<void> {
  const numbers = (await h.sandbox.admin.jobs()).map((j) => j.orderNumber);
  const twice = numbers.filter((n, i) => numbers.indexOf(n) !== i);
  expect(twice, 'order numbers with more than one job').toEqual([]);
}

describe('a first run checks the orders its ledger has never seen', () => {
  it('lists the account once when that is cheaper: orders on every page, and a closed one, are found and not created again', async () => {
    // Eight orders, three pages: OLD-1 is on the last page (oldest), OLD-130 on the second,
    // OLD-250 on the first, HIST-1 is closed (listed only with includeClosedJobs).
    const existing = ['OLD-1', 'OLD-130', 'OLD-250', 'HIST-1'];
    const fresh = ['LIST-1', 'LIST-2', 'LIST-3', 'LIST-4'];
    const { calls, status } = await firstRun('listing', [...existing, ...fresh]);
    for (const o of existing) expect(status[o], o).toBe('already-submitted');
    for (const o of fresh) expect(status[o], o).toBe('submitted');
    await expectOneJobPerOrder();
    // The listing path: its three pages, and no search (a search per order would be eight).
    expect(calls['GET /Jobs/active']).toBe(3);
    expect(calls['POST /Jobs']).toBe(2 * fresh.length);
  });

  it('searches each order when the account has more pages than there are orders: found ones are not created again', async () => {
    // Three orders, three pages: OLD-2 (last page) and OLD-120 (second page) exist, SRCH-1 does not.
    const { calls, status } = await firstRun('search', ['OLD-2', 'OLD-120', 'SRCH-1']);
    expect(status).toEqual({ 'OLD-2': 'already-submitted', 'OLD-120': 'already-submitted', 'SRCH-1': 'submitted' });
    await expectOneJobPerOrder();
    // The search path: the first page (which tells the account's size), then one search each.
    expect(calls['GET /Jobs/active']).toBe(1 + 3);
    expect(calls['POST /Jobs']).toBe(2);
  });

  it('an order found on the first page needs no search even on the search path', async () => {
    // OLD-249 is among the newest hundred; OLD-3 and OLD-4 are not.
    const { calls, status } = await firstRun('newest', ['OLD-249', 'OLD-3', 'OLD-4']);
    expect(status).toEqual({
      'OLD-249': 'already-submitted',
      'OLD-3': 'already-submitted',
      'OLD-4': 'already-submitted',
    });
    await expectOneJobPerOrder();
    expect(calls['GET /Jobs/active']).toBe(1 + 2);
    expect(calls['POST /Jobs'] ?? 0).toBe(0);
  });
});

/** An API that answers GET /Jobs/active from `jobs`, `shape` changing each page's envelope. */
function pages(
  count: number,
  shape: (page: ActiveJobsEnvelope) => Partial<ActiveJobsEnvelope> = () => ({}),
): { fetch: (page: number, size: number) => Promise<ActiveJobsEnvelope>; asked: number[] } {
  const jobs = Array.from(
    { length: count },
    (_, i) => ({ jobNumber: count - i, orderNumber: `PO-${count - i}` }) as ActiveJobDto,
  );
  const asked: number[] = [];
  return {
    asked,
    fetch: async (page, size) => {
      asked.push(page);
      const totalPages = Math.ceil(count / size);
      const envelope: ActiveJobsEnvelope = {
        items: jobs.slice((page - 1) * size, page * size),
        totalCount: count,
        pageNumber: page,
        pageSize: size,
        totalPages,
        hasPreviousPage: page > 1,
        hasNextPage: page < totalPages,
      };
      return { ...envelope, ...shape(envelope) };
    },
  };
}

describe('listAccount, against answers the spec leaves open', () => {
  it('reads every page when the pages are fewer than the orders, and is complete', async () => {
    const api = pages(450);
    const listing = await listAccount(api.fetch, 6);
    expect(api.asked).toEqual([1, 2, 3, 4, 5]);
    expect(listing.complete).toBe(true);
    expect(listing.jobs.get('PO-1')?.map((j) => j.jobNumber)).toEqual([1]);
    expect(listing.jobs.size).toBe(450);
  });

  it('stops after the first page when the pages are as many as the orders; what it read still counts', async () => {
    const api = pages(450);
    const listing = await listAccount(api.fetch, 5);
    expect(api.asked).toEqual([1]);
    expect(listing.complete).toBe(false);
    expect(listing.jobs.has('PO-450')).toBe(true);
  });

  it('without totals, reads a hundredth of the orders in pages and is complete only if the listing ended', async () => {
    const noTotals = () => ({ totalCount: undefined, totalPages: undefined }) as unknown as Partial<ActiveJobsEnvelope>;
    const ended = pages(150, noTotals);
    expect((await listAccount(ended.fetch, 200)).complete).toBe(true);
    expect(ended.asked).toEqual([1, 2]);
    const longer = pages(350, noTotals);
    expect((await listAccount(longer.fetch, 200)).complete).toBe(false);
    expect(longer.asked).toEqual([1, 2]);
  });

  it('a total that changes between pages (a job cancelled meanwhile could shift one past a page boundary) is not complete', async () => {
    const api = pages(250, (p) => (p.pageNumber > 1 ? { totalCount: 249 } : {}));
    expect((await listAccount(api.fetch, 50)).complete).toBe(false);
  });

  it('fewer distinct jobs than the total, or a server that never says the last page, is not complete', async () => {
    const repeated = pages(250, (p) => (p.pageNumber === 2 ? { items: [] } : {}));
    expect((await listAccount(repeated.fetch, 50)).complete).toBe(false);
    const endless = pages(
      250,
      () =>
        ({ hasNextPage: true, totalPages: undefined, totalCount: undefined }) as unknown as Partial<ActiveJobsEnvelope>,
    );
    const listing = await listAccount(endless.fetch, 250);
    expect(listing.complete).toBe(false);
    expect(endless.asked.length).toBeLessThanOrEqual(3);
  });

  it('honours a server that caps the page size below 100 (its own totalPages)', async () => {
    const api = pages(90);
    const capped = async (page: number) => api.fetch(page, 20);
    const listing = await listAccount(capped, 10);
    expect(api.asked).toEqual([1, 2, 3, 4, 5]);
    expect(listing.complete).toBe(true);
  });

  it('never lists a huge account page by page when searching is cheaper, and caps any listing', () => {
    const first = (totalPages: number) =>
      ({ totalPages, totalCount: totalPages * 100, pageSize: 100, items: [] }) as unknown as ActiveJobsEnvelope;
    expect(listingBudget(1000, first(3))).toBe(3);
    expect(listingBudget(3, first(3))).toBe(0);
    expect(listingBudget(100_000, first(5000))).toBe(0);
    expect(listingBudget(10, first(0))).toBe(1);
  });
});
