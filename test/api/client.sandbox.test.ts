import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TokenCache } from '../../src/api/auth.js';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../src/api/client.js';
import { isNotFound, orNull } from '../../src/api/errors.js';
import type { JobCandidate } from '../../src/api/types.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { caught } from '../support/api-errors.js';

const PRICE_CODE = 'DTF Full Color 10" x 10"';
const FAST: ApiClientOptions = { retry: { baseDelayMs: 1, maxDelayMs: 5 } };

let sandbox: Sandbox;
const clients: ApiClient[] = [];
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await sandbox.close();
});
beforeEach(async () => {
  await sandbox.admin.reset();
  await sandbox.admin.clearFaults();
  await sandbox.admin.resetCalls();
});

function client(account = 'us-demo', options: ApiClientOptions = FAST): ApiClient {
  const c = createApiClient(sandboxConfig(sandbox, account), options);
  clients.push(c);
  return c;
}

async function calls(key: string): Promise<number> {
  return (await sandbox.admin.calls())[key] ?? 0;
}

function candidate(orderNumber: string): JobCandidate {
  return {
    orderNumber,
    description: 'client test',
    dateDue: '2030-06-14',
    deliveryAddress: {
      deliveryMethod: 'UPSGND',
      contactName: 'Ana Ruiz',
      streetAddress: '1 Main St',
      city: 'Austin',
      state: 'TX',
      stateCode: 'TX',
      postalCode: '78701',
      countryCodeISO2: 'US',
      country: 'United States',
    },
    items: [{ itemType: 'Asset', code: 'A10001', quantity: 50 }],
  };
}

describe('tokens', () => {
  it('N calls use one token request', async () => {
    const c = client();
    await c.lookups.countries();
    await c.lookups.jobStatuses();
    await c.priceCodes.processes();
    await Promise.all([c.account.get(), c.jobs.deliveryOptions(), c.assets.types()]);
    expect(await calls('POST token')).toBe(1);
  });

  it('fetches a new token once the cached one is near expiry', async () => {
    let clock = Date.now();
    const c = client('us-demo', { ...FAST, now: () => clock });
    await c.lookups.countries();
    clock += 530_000; // inside the 60 s margin of a 600 s token: still reused
    await c.lookups.countries();
    expect(await calls('POST token')).toBe(1);
    clock += 20_000; // 550 s: past expiry minus margin
    await c.lookups.countries();
    expect(await calls('POST token')).toBe(2);
  });

  it('short-lived tokens are still reused (proportional margin)', async () => {
    const short = await startSandbox({ port: 0, tokenTtlSeconds: 5 });
    try {
      const c = createApiClient(sandboxConfig(short, 'us-demo'), FAST);
      for (let i = 0; i < 4; i++) await c.lookups.sizeSets();
      await c.close();
      expect((await short.admin.calls())['POST token']).toBe(1);
    } finally {
      await short.close();
    }
  });

  it('a 401 (server-side expiry) drops the token and retries once', async () => {
    const c = client();
    await c.lookups.countries();
    await sandbox.admin.expireTokens();
    const r = await c.lookups.countries();
    expect(r.countries.length).toBeGreaterThan(0);
    expect(await calls('POST token')).toBe(2);
    expect(await calls('GET /Lookups/countries')).toBe(3);
  });

  it('credentials of one region are refused by another (token host and API host)', async () => {
    const us = sandboxConfig(sandbox, 'us-demo');
    const nz = sandboxConfig(sandbox, 'nz-demo');
    // NZ credentials at the US token host: refused.
    const wrongAuth = createApiClient({ ...nz, authUrl: us.authUrl, realm: us.realm }, FAST);
    clients.push(wrongAuth);
    expect((await caught(wrongAuth.account.get())).kind).toBe('auth');
    // An NZ token presented to the US API host: 401, one fresh token, 401 again, stop.
    await sandbox.admin.resetCalls();
    const wrongApi = createApiClient({ ...nz, baseUrl: us.baseUrl }, FAST);
    clients.push(wrongApi);
    const err = await caught(wrongApi.account.get());
    expect(err.kind).toBe('auth');
    expect(err.status).toBe(401);
    expect(await calls('POST token')).toBe(2);
  });
});

describe('account isolation', () => {
  it("one account cannot see another's job, even through a shared token cache", async () => {
    const cache = new TokenCache();
    const demo = client('us-demo', { ...FAST, tokenCache: cache });
    const other = client('us-other', { ...FAST, tokenCache: cache });
    const created = await demo.jobs.create(candidate('ISO-1'));
    expect((await demo.jobs.get(created.jobNumber)).orderNumber).toBe('ISO-1');
    const err = await caught(other.jobs.get(created.jobNumber));
    expect(isNotFound(err)).toBe(true);
    expect(await orNull(other.assets.get('A10001'))).toBeNull();
    expect((await demo.account.get()).id).not.toBe((await other.account.get()).id);
    expect(await calls('POST token')).toBe(2);
  });
});

describe('resources', () => {
  it('percent-encodes a price code with quotes and spaces', async () => {
    const pc = await client().priceCodes.get(PRICE_CODE);
    expect(pc.priceCode).toBe(PRICE_CODE);
    expect(pc.minimumQuantity).toBe(10);
    expect(await calls('GET /PriceCodes/{priceCode}')).toBe(1);
  });

  it('prices a custom-size code with dgX/dgY', async () => {
    const c = client();
    const list = await c.priceCodes.list();
    expect(list.some((p) => p.priceCode === 'DTF Custom Size')).toBe(false);
    const custom = await c.priceCodes.get('DTF Custom Size', { dgX: 5, dgY: 7 });
    expect(custom.hasMetaDataAttributes).toBe(true);
  });

  it('creates, reads, finds, patches and cancels a job', async () => {
    const c = client();
    const created = await c.jobs.create(candidate('PO-CLIENT-1'));
    expect(created.jobNumber).toBeGreaterThan(0);
    const recorded = await sandbox.admin.jobs();
    expect(recorded).toHaveLength(1);
    expect(recorded[0].headers['x-application-name']).toBe('API');
    expect((recorded[0].request as JobCandidate).items[0].code).toBe('A10001');

    const found = [];
    for await (const j of c.jobs.iterateActive({ searchText: 'PO-CLIENT-1', includeClosedJobs: true })) found.push(j);
    expect(found.map((j) => j.jobNumber)).toEqual([created.jobNumber]);

    const patched = await c.jobs.patch(created.jobNumber, { description: 'patched' });
    expect(patched.description).toBe('patched');
    await c.jobs.cancel(created.jobNumber);
    await c.jobs.cancel(created.jobNumber); // cancelling again succeeds again
    expect((await c.jobs.get(created.jobNumber)).jobStatus).toBe('Cancelled');
  });

  it('validate creates nothing and reports the validation messages of a bad payload', async () => {
    const c = client();
    const ok = await c.jobs.validate(candidate('PO-VAL'));
    expect(ok.status).toBeGreaterThanOrEqual(200);
    expect(ok.status).toBeLessThan(300);
    expect(await sandbox.admin.jobs()).toHaveLength(0);
    const bad = candidate('PO-VAL-2');
    bad.items = [
      { itemType: 'PriceCode', code: PRICE_CODE, quantity: 2, customerReference: 'x', attributes: { Colors: '1' } },
    ];
    const err = await caught(c.jobs.validate(bad));
    expect(err.status).toBe(400);
    expect((err.validationMessages?.length ?? 0) + Object.keys(err.errors ?? {}).length).toBeGreaterThan(0);
  });

  it('pages through every asset lazily', async () => {
    const c = client();
    const first = await c.assets.list({ pageSize: 50 });
    expect(first.totalPages).toBeGreaterThan(1);
    await sandbox.admin.resetCalls();
    let n = 0;
    for await (const a of c.assets.iterate({ pageSize: 50 })) {
      expect(a.assetTag).toBeTruthy();
      n++;
    }
    expect(n).toBe(first.totalResults);
    expect(await calls('GET /Assets')).toBe(first.totalPages);
    await sandbox.admin.resetCalls();
    for await (const _a of c.assets.iterate({ pageSize: 50 })) break;
    expect(await calls('GET /Assets')).toBe(1);
  });

  it('answers every documented endpoint', async () => {
    const c = client();
    expect((await c.priceCodes.processes()).processes.map((p) => p.processCode)).toContain('DTF');
    expect((await c.priceCodes.list({ pageSize: 5 })).length).toBeGreaterThan(0);
    expect((await c.jobs.deliveryOptions()).map((d) => d.code)).toContain('UPSGND');
    expect((await c.jobs.earliestShipDate({ processCodes: ['DTF'] })).timezone).toBeTruthy();
    expect((await c.jobs.active({ pageSize: 5 })).pageNumber).toBe(1);
    expect((await c.assets.global()).entities.length).toBeGreaterThan(0);
    expect(await c.assets.types()).toContainEqual({ process: 'DTF', assetType: 'DTF Transfer' });
    expect((await c.assets.get('A10001')).isArchived).toBe(false);
    const files = await c.assets.files('A10001');
    expect(files.assetTag).toBe('A10001');
    expect(files.currentFiles.map((f) => f.fileName)).toContain('A10001.png');
    const assetJobs = await c.assets.jobs('A10001');
    expect(assetJobs.assetCode).toBe('A10001');
    expect(assetJobs.totalCount).toBeGreaterThan(0);
    expect(assetJobs.jobs).toHaveLength(assetJobs.totalCount);
    expect((await c.account.get()).id).toBe(1001);
    const me = await c.account.user();
    expect(me.customerId).toBe(1001);
    expect(me.userName).toBe('alex.admin');
    let users = 0;
    for await (const _u of c.account.iterateUsers({ includeInactive: true })) users++;
    expect(users).toBeGreaterThanOrEqual(3);
    expect((await c.account.userById(502)).id).toBe(502);
    const transactions = await c.account.transactions();
    expect(transactions.currentPage).toBe(1);
    expect(transactions.totalPages).toBeGreaterThan(1);
    expect(transactions.entities).toHaveLength(transactions.returnedResults);
    let firstTransaction: number | string | undefined;
    for await (const t of c.account.iterateTransactions()) {
      firstTransaction = t.id;
      break;
    }
    expect(firstTransaction).toBe(transactions.entities[0].id);
    expect((await c.account.shipmentSettings()).availableCarriers).toContain('UPSGND');
    expect((await c.lookups.countries()).countries.some((x) => x.iso2 === 'NZ')).toBe(true);
    expect((await c.lookups.states('US')).states.some((s) => s.abbreviation === 'TX')).toBe(true);
    expect((await c.lookups.states('NZ')).states).toEqual([]);
    expect((await c.lookups.jobStatuses()).map((s) => s.name)).toContain('Received');
    expect((await c.lookups.processCodes()).map((p) => p.processCode)).toContain('DTF');
    expect((await c.lookups.sizeSets()).find((s) => s.name === 'Adult Apparel')?.sizes).toContain('M');
    expect((await c.stock.list({ code: 'GD5000' })).length).toBeGreaterThan(0);
    const item = await c.stock.get('GD5000');
    expect(item.stockVariants.map((v) => v.variantCode)).toContain('GD5000-BLK');
    const usShipping = await c.stock.shipping({ market: 'US' });
    expect(usShipping.length).toBeGreaterThan(0);
    expect(usShipping.every((s) => s.markets.includes('US'))).toBe(true);
    expect((await c.stock.shipping({ market: 'NZ' })).every((s) => s.markets.includes('NZ'))).toBe(true);
    expect((await c.promo.validate('SPRING10')).isValid).toBe(true);
    expect((await c.promo.validate('EXPIRED20')).isValid).toBe(false);
    expect(await c.status.json()).toBeTypeOf('object');
    expect(await c.status.page()).toBeTypeOf('string');
  });

  it('an ordinary user gets 403 on the users list', async () => {
    const err = await caught(client('us-demo-user').account.users());
    expect(err.status).toBe(403);
  });
});

describe('retries against sandbox faults', () => {
  it('a 503 on POST /Jobs is not retried: exactly one call', async () => {
    await sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'status', status: 503 }]);
    const err = await caught(client().jobs.create(candidate('PO-503')));
    expect(err.status).toBe(503);
    expect(err.mayHaveReachedServer).toBe(true);
    expect(await calls('POST /Jobs')).toBe(1);
  });

  it('a dropped connection after creating is reported as possibly delivered', async () => {
    await sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'create-then-drop' }]);
    const err = await caught(client().jobs.create(candidate('PO-DROP')));
    expect(err.kind === 'network' || err.kind === 'timeout').toBe(true);
    expect(err.mayHaveReachedServer).toBe(true);
    expect(await calls('POST /Jobs')).toBe(1);
    expect((await sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['PO-DROP']);
  });

  it('a 429 with Retry-After 1 is waited out and retried', async () => {
    await sandbox.admin.setFaults([
      { route: 'GET /Lookups/countries', kind: 'status', status: 429, retryAfterSeconds: 1, times: 1 },
    ]);
    const r = await client().lookups.countries();
    expect(r.countries.length).toBeGreaterThan(0);
    expect(await calls('GET /Lookups/countries')).toBe(2);
  });

  it('502/503 on a GET are retried until success', async () => {
    await sandbox.admin.setFaults([
      { route: 'GET /Jobs/delivery-options', kind: 'status', status: 502, times: 1 },
      { route: 'GET /Jobs/delivery-options', kind: 'status', status: 503, retryAfterSeconds: 0, times: 1 },
    ]);
    expect((await client().jobs.deliveryOptions()).length).toBeGreaterThan(0);
    expect(await calls('GET /Jobs/delivery-options')).toBe(3);
  });

  it('a 500 on a GET is retried once only', async () => {
    await sandbox.admin.setFaults([{ route: 'GET /Lookups/size-sets', kind: 'status', status: 500 }]);
    const err = await caught(client().lookups.sizeSets());
    expect(err.status).toBe(500);
    expect(await calls('GET /Lookups/size-sets')).toBe(2);
  });

  it('a connection reset on a GET is retried', async () => {
    await sandbox.admin.setFaults([{ route: 'GET /account', kind: 'reset', times: 1 }]);
    expect((await client().account.get()).id).toBe(1001);
    expect(await calls('GET /account')).toBe(2);
  });
});
