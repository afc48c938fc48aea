import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { Caller, dtfLine, start, usJob } from '../support/sandbox-http.js';

let sb: Sandbox;
let us: Caller;
const HOUR = 3_600_000;
beforeAll(async () => {
  // Tokens outlive the clock jumps below.
  sb = await start({ tokenTtlSeconds: 86_400 * 30 });
});
afterAll(() => sb.close());
beforeEach(async () => {
  await sb.admin.reset();
  us = new Caller(sb, 'us-demo');
});

async function create(over: Record<string, unknown> = {}): Promise<number> {
  const r = await us.post('/Jobs', usJob(over));
  expect(r.status, r.text).toBe(201);
  return r.body.jobNumber;
}
const job = async (n: number) => (await us.get(`/Jobs/${n}`)).body;

describe('job lifecycle', () => {
  it('progresses with the sandbox clock and sets flags per status', async () => {
    const n = await create();
    let j = await job(n);
    expect([j.jobStatus, j.isCancelable, j.permissions]).toEqual([
      'Received',
      true,
      { canEdit: true, lockedReason: null },
    ]);
    await sb.admin.advanceClock(1 * HOUR);
    expect((await job(n)).jobStatus).toBe('Scheduled');
    await sb.admin.advanceClock(23 * HOUR);
    j = await job(n);
    // In production: editable but no longer cancelable.
    expect([j.jobStatus, j.isCancelable, j.permissions.canEdit]).toEqual(['In Production', false, true]);
    expect(j.invoiceFile).toBeNull();
    await sb.admin.advanceClock(24 * HOUR);
    j = await job(n);
    expect(j.jobStatus).toBe('Dispatched');
    expect(j.permissions).toEqual({ canEdit: false, lockedReason: 'Job is Dispatched and can no longer be edited.' });
    expect(j.dateOut).toBe('2026-03-04T15:00:00Z');
    expect(j.shippingAddresses[0].trackingNumber).toBe(`UPSGND${n}1`);
    expect(j.shippingAddresses[0].trackingLink).toMatch(/^https:\/\//);
    expect(j.invoiceFile.uri).toContain(`INV-${n}`);
    expect(j.invoiceNumber).toBe(`INV-${n}`);
    const active = (await us.get('/Jobs/active')).body.items[0];
    expect(active.tracking).toEqual([
      { trackingNumber: `UPSGND${n}1`, trackingLink: j.shippingAddresses[0].trackingLink },
    ]);
    await sb.admin.advanceClock(5 * 24 * HOUR);
    expect((await job(n)).jobStatus).toBe('Closed');
  });

  it('artwork pending waits for an admin advance', async () => {
    const r = await us.post('/Jobs', usJob({ items: [dtfLine()] }));
    const n = r.body.jobNumber;
    await sb.admin.advanceClock(2 * HOUR);
    expect((await job(n)).jobStatus).toBe('Artwork Pending');
    expect(await sb.admin.advanceJob(n)).toEqual({ jobNumber: n, jobStatus: 'Scheduled' });
    expect(await sb.admin.advanceJob(n, 'On Hold')).toEqual({ jobNumber: n, jobStatus: 'On Hold' });
    await expect(sb.admin.advanceJob(n, 'Teleported')).rejects.toThrow(/400/);
    await expect(sb.admin.advanceJob(999999)).rejects.toThrow(/404/);
  });

  it('cancel: 204, 204 again, 409 once in production; cancelled jobs leave the active list', async () => {
    const a = await create();
    expect((await us.post(`/Jobs/${a}/cancel`)).status).toBe(204);
    expect((await job(a)).jobStatus).toBe('Cancelled');
    expect((await job(a)).isCancelable).toBe(false);
    expect((await us.post(`/Jobs/${a}/cancel`)).status).toBe(204);
    const b = await create({ orderNumber: 'PO-2' });
    await sb.admin.advanceJob(b, 'In Production');
    const refused = await us.post(`/Jobs/${b}/cancel`);
    expect(refused.status).toBe(409);
    expect(refused.body.status).toBe(409);
    const listed = (await us.get('/Jobs/active?includeClosedJobs=true')).body.items.map((i: any) => i.jobNumber);
    expect(listed).toContain(b);
    expect(listed).not.toContain(a);
    expect((await us.post('/Jobs/123/cancel')).status).toBe(404);
  });

  it('PATCH changes only non-null fields', async () => {
    const n = await create({ orderComment: 'keep me' });
    const r = await us.call('PATCH', `/Jobs/${n}`, {
      json: { description: 'New text', orderNumber: null, comments: null },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ description: 'New text', orderNumber: 'PO-1', comments: 'keep me', jobNumber: n });
    const due = await us.call('PATCH', `/Jobs/${n}`, { json: { dateDue: '2026-04-10', mustDate: true } });
    expect(due.body).toMatchObject({ dateDue: '2026-04-10T00:00:00', mustDate: true });
  });

  it('PATCH: dateDue before the earliest ship date is 400, locationCode is 403, locked job is 403 with lockedReason', async () => {
    const n = await create();
    const early = await us.call('PATCH', `/Jobs/${n}`, { json: { dateDue: '2026-03-03' } });
    expect(early.status).toBe(400);
    expect(early.body.errors.dateDue[0]).toMatch(/earliest possible date is 2026-03-05/);
    const loc = await us.call('PATCH', `/Jobs/${n}`, { json: { locationCode: 'LAX' } });
    expect(loc.status).toBe(403);
    await sb.admin.advanceJob(n, 'Dispatched');
    const locked = await us.call('PATCH', `/Jobs/${n}`, { json: { description: 'x' } });
    expect(locked.status).toBe(403);
    expect(locked.body.lockedReason).toBe('Job is Dispatched and can no longer be edited.');
    expect((await job(n)).description).toBe('Spring team kit');
    const bad = await us.call('PATCH', `/Jobs/${n}`, { body: '{}', headers: { 'content-type': 'text/plain' } });
    expect(bad.status).toBe(415);
  });

  it("another account's job answers 404 exactly like a missing one", async () => {
    const n = await create();
    const other = new Caller(sb, 'us-other');
    const theirs = await other.get(`/Jobs/${n}`);
    const missing = await other.get('/Jobs/799999');
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(Object.keys(theirs.body).sort()).toEqual(Object.keys(missing.body).sort());
    expect((await other.post(`/Jobs/${n}/cancel`)).status).toBe(404);
    expect((await other.call('PATCH', `/Jobs/${n}`, { json: { description: 'x' } })).status).toBe(404);
    // The same customer through the ordinary-user credential sees it.
    expect((await new Caller(sb, 'us-demo-user').get(`/Jobs/${n}`)).status).toBe(200);
  });
});

describe('GET /Jobs/active', () => {
  it('searches each word as a prefix of some field, in any order', async () => {
    const a = await create({ orderNumber: 'PO-1001', description: 'Spring team kit' });
    const b = await create({
      orderNumber: 'PO-10010',
      description: 'Autumn hoodies',
      deliveryAddress: { deliveryMethod: 'PICKUP' },
    });
    const c = await create({
      orderNumber: 'XY-7',
      description: 'Spring caps',
      items: [{ itemType: 'Asset', code: 'A10001', quantity: 50, garment: 'Bella 3001' }],
    });
    const search = async (q: string) =>
      (await us.get(`/Jobs/active?searchText=${encodeURIComponent(q)}`)).body.items.map((i: any) => i.jobNumber).sort();
    expect(await search('PO-1001')).toEqual([a, b].sort());
    expect(await search('kit spring')).toEqual([a]);
    expect(await search('spr')).toEqual([a, c].sort());
    expect(await search('spring autumn')).toEqual([]);
    expect(await search('customer pick')).toEqual([b]);
    expect(await search('bella')).toEqual([c]);
    expect(await search('a10001')).toEqual([a, b, c].sort());
    expect(await search(String(a))).toEqual([a]);
    expect(await search('eam')).toEqual([]);
  });

  it('pages (default 20, max 100), newest first, closed only on request', async () => {
    const made: number[] = [];
    for (let i = 0; i < 23; i++) made.push(await create({ orderNumber: `P-${i}` }));
    const first = (await us.get('/Jobs/active')).body;
    expect(first).toMatchObject({
      totalCount: 23,
      pageNumber: 1,
      pageSize: 20,
      totalPages: 2,
      hasPreviousPage: false,
      hasNextPage: true,
    });
    expect(first.items[0].jobNumber).toBe(made[22]);
    const second = (await us.get('/Jobs/active?page=2')).body;
    expect(second.items).toHaveLength(3);
    expect(second).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    expect((await us.get('/Jobs/active?pageSize=500')).body.pageSize).toBe(100);
    const asc = (await us.get('/Jobs/active?sortDirection=asc&pageSize=100')).body.items.map((i: any) => i.jobNumber);
    expect(asc).toEqual(made);
    expect((await us.get(`/Jobs/active?excludeJobNumber=${made[0]}`)).body.totalCount).toBe(22);
    // Seeded history is Closed: listed only with includeClosedJobs.
    const closed = (await us.get('/Jobs/active?includeClosedJobs=true&searchText=HIST')).body;
    expect(closed.totalCount).toBe(3);
    expect(closed.items.every((i: any) => i.masterJobStatus === 'Closed')).toBe(true);
    expect((await us.get('/Jobs/active?searchText=HIST')).body.totalCount).toBe(0);
    expect((await us.get('/Jobs/active?sortColumn=Bogus')).status).toBe(400);
  });

  it('orderGroup sorts by sequence ascending; customerUserId narrows and checks membership', async () => {
    await create({ orderGroup: 'G1', orderGroupSequence: 2 });
    await create({ orderGroup: 'G1', orderGroupSequence: 1, customerUserId: 502 });
    await create({ orderGroup: 'G1', orderGroupSequence: 3 });
    await create({ orderGroup: 'G2', orderGroupSequence: 1 });
    const g = (await us.get('/Jobs/active?orderGroup=G1')).body;
    expect(g.items.map((i: any) => i.orderGroupSequence)).toEqual([1, 2, 3]);
    const mine = (await us.get('/Jobs/active?customerUserId=502')).body;
    expect(mine.totalCount).toBe(1);
    expect(mine.items[0].orderGroupSequence).toBe(1);
    const foreign = await us.get('/Jobs/active?customerUserId=601');
    expect(foreign.status).toBe(400);
  });
});

describe('GET /Assets/{code}/jobs', () => {
  it('lists active jobs first, then completed by dateOut descending', async () => {
    const n = await create();
    const r = await us.get('/Assets/A10001/jobs');
    expect(r.status).toBe(200);
    expect(r.body.assetCode).toBe('A10001');
    expect(r.body.jobs[0]).toMatchObject({ jobNumber: n, dateOut: null, quantity: 50, masterJobStatus: 'Received' });
    const done = r.body.jobs.slice(1).map((j: any) => j.dateOut);
    expect(done.length).toBe(2);
    expect(done).toEqual([...done].sort().reverse());
    expect(r.body.totalCount).toBe(3);
    expect((await us.get('/Assets/ZZZ/jobs')).status).toBe(400);
  });
});
