import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

async function createdOrders(): Promise<string[]> {
  return (await h.sandbox.admin.jobs()).map((j) => j.orderNumber ?? '?').sort();
}

async function ledgerEntry(orderNumber: string) {
  const ledger = new FolderLedger(h.stateDir);
  for await (const e of ledger.entries()) if (e.orderNumber === orderNumber) return e;
  return undefined;
}

describe('htorder run', () => {
  it('submits a job with all three item types and reports job number and newAssetSku', async () => {
    const file = await h.write(
      'order.yaml',
      manifest([{ orderNumber: 'PO-1', items: ITEMS.print + ITEMS.reorder + ITEMS.stock }]),
    );
    const { code, stderr } = await h.cli('run', [file]);
    expect(code).toBe(0);

    const created = await h.sandbox.admin.jobs();
    expect(created).toHaveLength(1);
    const body = created[0]!.request as any;
    // Human values resolved to the API's codes before sending.
    expect(body.deliveryAddress).toMatchObject({
      deliveryMethod: 'UPSGND',
      countryCodeISO2: 'US',
      state: 'TX',
      postalCode: '78701',
    });
    expect(body.items.map((i: any) => i.itemType)).toEqual(['PriceCode', 'Asset', 'Stock']);
    expect(body.items[0].attributes).toEqual({ Colors: '4' });
    expect(body.items[2]).toMatchObject({ variantCode: 'GD5000-BLK', sizeQuantities: { S: 10, M: 20 }, quantity: 30 });
    expect(body.validateOnly).toBe(false);
    expect(typeof body.dateDue).toBe('string');

    const report = await h.report(file);
    const job = report.jobs[0]!;
    expect(job).toMatchObject({ status: 'submitted', jobNumber: created[0]!.jobNumber });
    expect(job.totalJobCost).toBeGreaterThan(0);
    expect(job.estimatedCost).toBe(job.totalJobCost);
    expect(job.items[0]!.newAssetSku).toMatch(/^A\d+$/);
    expect(job.items.map((i) => i.status)).toEqual(['submitted', 'submitted', 'submitted']);
    expect(existsSync(`${file}.result.csv`)).toBe(true);
    expect(existsSync(`${file}.errors.txt`)).toBe(false);
    expect(stderr).toContain(String(created[0]!.jobNumber));
    // The signed artwork URL's query string is nowhere in what htorder wrote or printed.
    const written =
      stderr + (await readFile(`${file}.result.json`, 'utf8')) + (await readFile(`${file}.result.csv`, 'utf8'));
    expect(written).not.toContain('SECRETSIG');
  });

  it('a re-run sends nothing and reports already-submitted with the job number', async () => {
    const file = await h.write(
      'order.yaml',
      manifest([
        { orderNumber: 'PO-1', items: ITEMS.reorder },
        { orderNumber: 'PO-2', items: ITEMS.stock },
      ]),
    );
    expect((await h.cli('run', [file])).code).toBe(0);
    const first = await h.report(file);
    const postsBefore = (await h.sandbox.admin.calls())['POST /Jobs'];

    const again = await h.cli('run', [file]);
    expect(again.code).toBe(0);
    const second = await h.report(file);
    expect(second.jobs.map((j) => j.status)).toEqual(['already-submitted', 'already-submitted']);
    expect(second.jobs.map((j) => j.jobNumber)).toEqual(first.jobs.map((j) => j.jobNumber));
    // Not even a dry run: the ledger answered before resolution.
    expect((await h.sandbox.admin.calls())['POST /Jobs']).toBe(postsBefore);
    expect(await createdOrders()).toEqual(['PO-1', 'PO-2']);
  });

  it("keeps the account's currency on every job: a re-run's and a plan's already-submitted jobs too", async () => {
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-C1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file])).code).toBe(0);
    const first = (await h.report(file)).jobs[0];
    expect(first?.currency).toBe('USD');
    for (const command of ['run', 'plan'] as const) {
      expect((await h.cli(command, [file])).code).toBe(0);
      const again = (await h.report(file)).jobs[0];
      expect(again, command).toMatchObject({
        status: 'already-submitted',
        totalJobCost: first?.totalJobCost,
        currency: 'USD',
      });
    }
  });

  it("gives the ledger's spare files back before it returns, not one by one on the way out", async () => {
    const spares = async () =>
      (await readdir(join(h.stateDir, 'ledger'), { recursive: true })).filter((n) => n.endsWith('.spare'));
    const jobs = (prefix: string) =>
      Array.from({ length: 6 }, (_, i) => ({ orderNumber: `${prefix}-${i}`, items: ITEMS.reorder }));
    const a = await h.write('a.yaml', manifest(jobs('PA')));
    const b = await h.write('b.yaml', manifest(jobs('PB')));
    expect((await h.cli('run', [a, b])).code).toBe(0);
    expect(await spares()).toEqual([]);
    expect(await createdOrders()).toEqual([...jobs('PA'), ...jobs('PB')].map((j) => j.orderNumber).sort());
    // The ledger still records every order: a re-run sends nothing.
    const posts = (await h.sandbox.admin.calls())['POST /Jobs'];
    expect((await h.cli('run', [a, b])).code).toBe(0);
    expect((await h.sandbox.admin.calls())['POST /Jobs']).toBe(posts);
  });

  it('a job changed after submission is reported, never resent', async () => {
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file])).code).toBe(0);
    await writeFile(
      file,
      manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder.replace('quantity: 50', 'quantity: 80') }]),
    );
    const { code } = await h.cli('run', [file]);
    expect(code).toBe(1);
    const job = (await h.report(file)).jobs[0]!;
    expect(job.status).toBe('already-submitted');
    expect(job.errors.map((e) => e.code)).toContain('ledger.changed-after-submit');
    expect(job.errors[0]!.source).toMatchObject({ line: 3 });
    expect(await createdOrders()).toEqual(['PO-1']);
  });

  it('is all or nothing by default: one invalid job holds back the others', async () => {
    const file = await h.write(
      'order.yaml',
      manifest([
        { orderNumber: 'PO-1', items: ITEMS.tooFew },
        { orderNumber: 'PO-2', items: ITEMS.stock },
      ]),
    );
    const { code, stderr } = await h.cli('run', [file]);
    expect(code).toBe(1);
    expect(await createdOrders()).toEqual([]);
    const report = await h.report(file);
    expect(report.jobs.map((j) => j.status)).toEqual(['invalid', 'not-submitted']);
    const errors = await readFile(`${file}.errors.txt`, 'utf8');
    // Compiler style: file:line:col: field: message naming the value and the limit.
    expect(errors).toMatch(/order\.yaml:\d+:\d+: jobs\[0\]\.items\[1\]\.quantity: .*5.*10/);
    expect(errors).toMatch(/jobs\[1\]: valid, but not submitted/);
    expect(stderr).toContain('not-submitted');
  });

  it('--partial submits the valid jobs and still exits 1', async () => {
    const file = await h.write(
      'order.yaml',
      manifest([
        { orderNumber: 'PO-1', items: ITEMS.tooFew },
        { orderNumber: 'PO-2', items: ITEMS.stock },
      ]),
    );
    const { code } = await h.cli('run', [file], { partial: true });
    expect(code).toBe(1);
    expect(await createdOrders()).toEqual(['PO-2']);
    expect((await h.report(file)).jobs.map((j) => j.status)).toEqual(['invalid', 'submitted']);
  });

  it('maps a refusal that only the API can detect to the field and its line', async () => {
    // customerUserId must be an existing, active user of the account: only the API knows.
    const text = manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]).replace(
      '  - orderNumber: PO-1\n',
      '  - orderNumber: PO-1\n    customerUserId: 9999\n',
    );
    const file = await h.write('order.yaml', text);
    const { code } = await h.cli('run', [file]);
    expect(code).toBe(1);
    const job = (await h.report(file)).jobs[0]!;
    expect(job.status).toBe('invalid');
    const error = job.errors.find((e) => e.code.startsWith('api.'))!;
    expect(error.field).toBe('jobs[0].customerUserId');
    expect(error.source).toMatchObject({ line: 4 });
    expect(await createdOrders()).toEqual([]);
  });

  it('exits 3 and decides nothing when the API cannot be reached', async () => {
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
    const { code, stderr } = await h.cli('run', [file], {
      env: { HTORDER_BASE_URL: 'http://127.0.0.1:9/us/api', HTORDER_AUTH_URL: 'http://127.0.0.1:9/us/auth' },
    });
    expect(code).toBe(3);
    expect(stderr).toMatch(/cannot reach the API/);
    // The host and the cause, not "or the credentials were refused".
    expect(stderr).toContain('127.0.0.1:9 refused the connection (nothing listens there) (ECONNREFUSED)');
    expect(stderr).not.toContain('credentials were refused');
    expect(stderr).not.toContain(h.env().HTORDER_CLIENT_SECRET);
    // The input was read while the token was asked for, but nothing was decided: no reports.
    expect(existsSync(`${file}.result.json`)).toBe(false);
  });

  // run reads its first input while the token and account requests are in flight.
  it('asks for the token and the account once, and for each lookup once, while reading the input', async () => {
    const file = await h.write(
      'order.yaml',
      manifest([
        { orderNumber: 'PO-1', items: ITEMS.reorder },
        { orderNumber: 'PO-2', items: ITEMS.reorder },
      ]),
    );
    expect((await h.cli('run', [file])).code).toBe(0);
    const calls = await h.sandbox.admin.calls();
    expect(calls).toMatchObject({ 'POST token': 1, 'GET /account': 1, 'POST /Jobs': 4 });
    // Lookups: once per distinct value (a new ledger's search for each unseen order aside).
    const lookups = Object.entries(calls).filter(([route]) => route.startsWith('GET ') && route !== 'GET /Jobs/active');
    expect(lookups.length).toBeGreaterThan(2);
    for (const [route, n] of lookups) expect([route, n]).toEqual([route, 1]);
    expect(await createdOrders()).toEqual(['PO-1', 'PO-2']);
  });

  it('an input that is not YAML sends no lookup and no job: only the token and account requests, as ever', async () => {
    const file = await h.write(
      'order.yaml',
      `${manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }])}  - [unclosed\n`,
    );
    const { code } = await h.cli('run', [file]);
    expect(code).toBe(1);
    expect((await h.report(file)).errors.map((e) => e.code)).toEqual([expect.stringMatching(/^yaml\./)]);
    expect(await h.sandbox.admin.calls()).toEqual({ 'POST token': 1, 'GET /account': 1 });
  });
});

describe('htorder plan', () => {
  it('dry-runs every job, estimates, and creates nothing', async () => {
    const file = await h.write(
      'order.yaml',
      manifest([
        { orderNumber: 'PO-1', items: ITEMS.print },
        { orderNumber: 'PO-2', items: ITEMS.reorder },
      ]),
    );
    const { code, stderr } = await h.cli('plan', [file]);
    expect(code).toBe(0);
    expect(await createdOrders()).toEqual([]);
    const report = await h.report(file);
    expect(report.command).toBe('plan');
    expect(report.jobs.map((j) => j.status)).toEqual(['valid', 'valid']);
    expect(report.jobs.every((j) => (j.estimatedCost ?? 0) > 0)).toBe(true);
    expect(report.jobs.every((j) => /^\d{4}-\d{2}-\d{2}/.test(j.dateDue ?? ''))).toBe(true);
    // One validateOnly POST per job; nothing else posted.
    expect((await h.sandbox.admin.calls())['POST /Jobs']).toBe(2);
    expect(stderr).toMatch(/estimated total: \d+\.\d\d/);
  });

  it('reports orders the ledger knows as already-submitted without dry-running them', async () => {
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file])).code).toBe(0);
    const posts = (await h.sandbox.admin.calls())['POST /Jobs'];
    expect((await h.cli('plan', [file])).code).toBe(0);
    const job = (await h.report(file)).jobs[0]!;
    expect(job.status).toBe('already-submitted');
    expect(job.jobNumber).not.toBeNull();
    expect((await h.sandbox.admin.calls())['POST /Jobs']).toBe(posts);
  });
});

describe('exactly once under faults', () => {
  it('"create, then drop the connection": settled by search, exactly one job', async () => {
    await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'create-then-drop', times: 1 }]);
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
    const { code } = await h.cli('run', [file]);
    expect(code).toBe(0);
    expect(await createdOrders()).toEqual(['PO-1']);
    const job = (await h.report(file)).jobs[0]!;
    expect(job.status).toBe('submitted');
    expect(job.jobNumber).toBe((await h.sandbox.admin.jobs())[0]!.jobNumber);
    expect(await ledgerEntry('PO-1')).toMatchObject({ state: 'submitted', settledBy: 'search', attempts: 1 });
  });

  it('"create, then answer 500": settled by search, exactly one job', async () => {
    await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'create-then-500', times: 1 }]);
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.print }]));
    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await createdOrders()).toEqual(['PO-1']);
    // Line details recovered from the job itself.
    expect((await h.report(file)).jobs[0]!.items[0]!.newAssetSku).toMatch(/^A\d+$/);
  });

  it('503 on create: the search proves nothing exists, then it is sent again', async () => {
    await h.sandbox.admin.setFaults([
      { route: 'POST /Jobs', when: 'create', kind: 'status', status: 503, retryAfterSeconds: 0, times: 2 },
    ]);
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await createdOrders()).toEqual(['PO-1']);
    expect(await ledgerEntry('PO-1')).toMatchObject({ state: 'submitted', attempts: 3 });
    // One search because the ledger is new for the account (before anything is spent on the
    // order), then one per failed send before the third send.
    expect((await h.sandbox.admin.calls())['GET /Jobs/active']).toBe(3);
  });

  it('a 500 that created nothing is re-checked with validateOnly, then sent again', async () => {
    await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'status', status: 500, times: 1 }]);
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await createdOrders()).toEqual(['PO-1']);
    // create (500) → search (not found) → validateOnly (clean) → create again.
    expect(await ledgerEntry('PO-1')).toMatchObject({ state: 'submitted', attempts: 2 });
    expect((await h.sandbox.admin.calls())['POST /Jobs']).toBe(4);
  });

  it('429 and 503 storms on every route: every order exactly once, nothing lost', async () => {
    await h.sandbox.admin.setFaults(
      [
        { route: '*', kind: 'status', status: 429, retryAfterSeconds: 0, probability: 0.15 },
        { route: '*', kind: 'status', status: 503, retryAfterSeconds: 0, probability: 0.15 },
      ],
      7,
    );
    const orders = Array.from({ length: 12 }, (_, i) => ({
      orderNumber: `PO-${i + 1}`,
      items: i % 2 ? ITEMS.reorder : ITEMS.stock,
    }));
    const file = await h.write('order.yaml', manifest(orders));
    // A storm may outlast one run's patience; running again until done must never duplicate.
    let code = -1;
    for (let run = 0; run < 6 && code !== 0; run++)
      code = (await h.cli('run', [file], { env: { HTORDER_CONCURRENCY: '4' } })).code;
    expect(code).toBe(0);
    expect(await createdOrders()).toEqual(orders.map((o) => o.orderNumber).sort());
    const statuses = (await h.report(file)).jobs.map((j) => j.status);
    expect(statuses.every((s) => s === 'submitted' || s === 'already-submitted')).toBe(true);
    // The storm really blew: both rules fired, many times.
    const rules = (await (await fetch(`${h.sandbox.url}/_sandbox/faults`)).json()) as { fired: number }[];
    expect(rules.map((r) => r.fired > 3)).toEqual([true, true]);
  });

  it('a token expiring in the middle of a run is replaced once and the run completes', async () => {
    await h.sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'latency', latencyMs: 40 }]);
    const orders = Array.from({ length: 8 }, (_, i) => ({ orderNumber: `PO-${i + 1}`, items: ITEMS.reorder }));
    const file = await h.write('order.yaml', manifest(orders));
    const running = h.cli('run', [file], { env: { HTORDER_CONCURRENCY: '2' } });
    // Expire every token while the run is submitting.
    while (((await h.sandbox.admin.calls())['POST /Jobs'] ?? 0) < 10) await new Promise((r) => setTimeout(r, 10));
    await h.sandbox.admin.expireTokens();
    expect((await running).code).toBe(0);
    expect(await createdOrders()).toHaveLength(8);
    expect((await h.sandbox.admin.calls())['POST token']).toBe(2);
  });
});
