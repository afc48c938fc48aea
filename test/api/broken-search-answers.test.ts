import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClientOptions } from '../../src/api/client.js';
import { findSubmitted } from '../../src/pipeline/find-submitted.js';
import { caught } from '../support/api-errors.js';
import { json, loopbackConfig, startLoopback, tokenReply } from '../support/loopback-server.js';

/**
 * The job search (GET /Jobs/active) decides whether an order in doubt was created: an answer
 * it cannot use must fail the search with an error naming the call, never be taken as found
 * (a job recorded that may not be the order's) nor as not found (the order sent again).
 */
const FAST: ApiClientOptions = { retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 2 } };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await (cleanups.pop() as () => Promise<void>)();
});

/** A server whose GET /Jobs/active answers `page(n)` for page n. */
async function searchServer(page: (n: number) => unknown) {
  let tokens = 0;
  const srv = await startLoopback((req, res) => {
    if (req.url.startsWith('/auth/')) return tokenReply(res, ++tokens);
    const n = Number(new URL(req.url, 'http://x').searchParams.get('page'));
    return json(res, 200, page(n));
  });
  const client = createApiClient(loopbackConfig(srv.url), FAST);
  cleanups.push(
    () => srv.close(),
    () => client.close(),
  );
  return { srv, client };
}

const job = (over: Record<string, unknown> = {}) => ({
  permissions: null,
  jobNumber: 70001,
  masterJobStatus: 'Open',
  originCode: 'API',
  description: null,
  mustDate: false,
  dateDue: '2026-12-10',
  dateOut: null,
  shippedDaysToProcess: null,
  orderNumber: 'PO-1',
  orderGroup: null,
  orderGroupSequence: null,
  tracking: [],
  ...over,
});

const envelope = (items: unknown, over: Record<string, unknown> = {}) => ({
  items,
  totalCount: Array.isArray(items) ? items.length : 0,
  pageNumber: 1,
  pageSize: 100,
  totalPages: 1,
  hasPreviousPage: false,
  hasNextPage: false,
  ...over,
});

describe('a job search answer with a job the client cannot use fails the search, naming the call', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a job number in a string', envelope([job({ jobNumber: '70001' })]), 'jobNumber'],
    ['a null job number', envelope([job({ jobNumber: null })]), 'jobNumber'],
    ['a fractional job number', envelope([job({ jobNumber: 1.5 })]), 'jobNumber'],
    ['a job number past the safe integers', envelope([job({ jobNumber: 2 ** 60 })]), 'jobNumber'],
    ['no job number', envelope([job({ jobNumber: undefined })]), 'jobNumber'],
    ['an order number that is not text', envelope([job({ orderNumber: 1 })]), 'orderNumber'],
    ['a job that is not an object', envelope([job(), 'PO-1']), 'item 2'],
    ['no list of jobs', envelope(null), 'items'],
    ['an array instead of the envelope', [job()], 'envelope'],
  ];
  for (const [name, answer, names] of cases) {
    it(`${name}: ApiError naming GET /Jobs/active and the field, no TypeError`, async () => {
      const { client } = await searchServer(() => answer);
      const err = await caught(findSubmitted(client, 'PO-1'));
      expect(err.message).toContain('GET /Jobs/active');
      expect(err.message).toContain(names);
      expect(err.kind).toBe('http');
    });
  }

  it('a usable answer still finds the job', async () => {
    const { client } = await searchServer(() => envelope([job(), job({ jobNumber: 70002, orderNumber: 'PO-10' })]));
    const found = await findSubmitted(client, 'PO-1');
    expect(found.exact.map((j) => j.jobNumber)).toEqual([70001]);
  });
});

describe('a job the search lists twice is one job', () => {
  it('listed again on one page and on the next: found once, not as two jobs carrying the order number', async () => {
    const { client } = await searchServer((n) =>
      envelope(n === 1 ? [job(), job()] : [job(), job({ jobNumber: 70002, orderNumber: 'PO-2' })], {
        pageNumber: n,
        totalPages: 2,
        hasNextPage: n < 2,
      }),
    );
    const found = await findSubmitted(client, 'PO-1');
    expect(found.exact.map((j) => j.jobNumber)).toEqual([70001]);
  });
});
