/**
 * The sandbox against the specification: the spec's example requests (test/contract/
 * spec-examples) sent to the real sandbox, whose answers must have the examples' shape: same
 * keys, same JSON types, same array element shapes (see shape.ts and the rules in index.json).
 * The sandbox must behave like the spec, not like our client: both are held to the fixtures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { entry, example, exampleText, jsonFiles } from './fixtures.js';
import { compareShape } from './shape.js';

/** A Monday before the factory's cut-off, so the fixture's due date (2026-03-20) can be met. */
const NOW = new Date('2026-03-02T15:00:00Z');
const ACCOUNT = 'us-demo';

interface Answer {
  status: number;
  contentType: string | null;
  body: any;
}

let sandbox: Sandbox;
let token: string;
const checked = new Set<string>();

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, contentType: res.headers.get('content-type'), body };
}

function region() {
  const account = sandbox.accounts.find((a) => a.name === ACCOUNT);
  if (!account) throw new Error(`no sandbox account ${ACCOUNT}`);
  return { account, region: sandbox.regions[account.region] };
}

/** The fixture's token request: its placeholders filled with the sandbox account's credentials. */
async function fetchToken(): Promise<Answer> {
  const { account, region: r } = region();
  const form = exampleText('token.request.txt')
    .trim()
    .replace('<CLIENT_ID>', encodeURIComponent(account.clientId))
    .replace('<CLIENT_SECRET>', encodeURIComponent(account.clientSecret));
  return send(`${r.authUrl}/realms/${r.realm}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
}

function call(method: string, path: string, opts: { query?: Record<string, unknown>; json?: unknown } = {}) {
  const url = new URL(`${region().region.baseUrl}${path}`);
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  return send(url.href, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
}

/**
 * Asserts the answer has the fixture's status and shape. `unchecked` lists arrays the seeded
 * data leaves empty (their element shape cannot be compared); it is asserted too, so a
 * change in coverage shows.
 */
function expectShape(file: string, answer: Answer, unchecked: string[] = []): void {
  const e = entry(file);
  checked.add(file);
  expect({ file, status: answer.status }).toEqual({ file, status: e.status });
  const report = compareShape(example(file), answer.body, e);
  expect({ file, differences: report.differences }).toEqual({ file, differences: [] });
  expect({ file, unchecked: report.unchecked }).toEqual({ file, unchecked });
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, now: NOW });
  const t = await fetchToken();
  token = t.body.access_token;
});
afterAll(async () => {
  await sandbox.close();
});

describe('sandbox answers have the shape of the spec examples', () => {
  it('token', async () => {
    expectShape('token.response.json', await fetchToken());
  });

  describe('price codes', () => {
    it('GET /PriceCodes/processes', async () => {
      expectShape('price-codes.processes.response.json', await call('GET', '/PriceCodes/processes'));
    });
    it('GET /PriceCodes/price-codes', async () => {
      const query = example('price-codes.list.query.json');
      expectShape('price-codes.list.response.json', await call('GET', '/PriceCodes/price-codes', { query }));
    });
    it('GET /PriceCodes/{priceCode} (a custom-size code, priced with the example dgX/dgY)', async () => {
      // The spec names no price code; this one has metadata attributes, so dgX/dgY apply.
      const list = await call('GET', '/PriceCodes/price-codes');
      expect(list.status).toBe(200);
      const plain = await call('GET', `/PriceCodes/${encodeURIComponent(list.body[0].priceCode)}`);
      expectShape('price-codes.get.response.json', plain);
      const custom = await call('GET', `/PriceCodes/${encodeURIComponent(CUSTOM_CODE)}`, {
        query: example('price-codes.get.query.json'),
      });
      expectShape('price-codes.get.response.json', custom);
    });
  });

  describe('jobs', () => {
    let jobNumber: number;

    it('POST /Jobs with validateOnly: the spec quotes the message only', async () => {
      const res = await call('POST', '/Jobs', { json: example('jobs.validate.request.json') });
      // Status and body shape are not shown; the message is.
      expect(res.status).toBeGreaterThanOrEqual(200);
      expect(res.status).toBeLessThan(300);
      expect(JSON.stringify(res.body)).toContain(exampleText('jobs.validate.response.txt').trim());
    });

    it('POST /Jobs with the example candidate', async () => {
      const res = await call('POST', '/Jobs', { json: example('jobs.create.request.json') });
      expectShape('jobs.create.response.json', res);
      jobNumber = res.body.jobNumber;
    });

    it('POST /Jobs rejected by validation', async () => {
      const bad = example('jobs.validate.request.json');
      bad.items[0].quantity = 0;
      bad.deliveryAddress.countryCodeISO2 = 'USA';
      expectShape('jobs.validation-failure.response.json', await call('POST', '/Jobs', { json: bad }));
    });

    it('PATCH /Jobs/{jobNumber} (the job just created, not the example number)', async () => {
      const res = await call('PATCH', `/Jobs/${jobNumber}`, { json: example('jobs.patch.request.json') });
      expectShape('jobs.patch.response.json', res);
    });

    it('GET /Jobs/{jobNumber} once dispatched (tracking and invoice filled in)', async () => {
      await sandbox.admin.advanceJob(jobNumber, 'Dispatched');
      expectShape('jobs.get.response.json', await call('GET', `/Jobs/${jobNumber}`));
    });

    it('POST /Jobs/{jobNumber}/cancel: 204 with no body, again when already cancelled', async () => {
      const created = await call('POST', '/Jobs', { json: example('jobs.create.request.json') });
      expect(created.status).toBe(201);
      for (let i = 0; i < 2; i++) {
        const res = await call('POST', `/Jobs/${created.body.jobNumber}/cancel`);
        expect({ status: res.status, body: res.body }).toEqual({ status: 204, body: null });
      }
    });

    it('GET /Jobs/active with the example query', async () => {
      const res = await call('GET', '/Jobs/active', { query: example('jobs.active.query.json') });
      expectShape('jobs.active.response.json', res);
      expect(res.body.items.map((j: { jobNumber: number }) => j.jobNumber)).toEqual([jobNumber]);
    });

    it('GET /Assets/{assetCode}/jobs lists the job', async () => {
      expectShape('assets.jobs.response.json', await call('GET', '/Assets/A10001/jobs'));
    });

    it('GET /Jobs/delivery-options and /Jobs/earliest-ship-date', async () => {
      expectShape('jobs.delivery-options.response.json', await call('GET', '/Jobs/delivery-options'));
      const query = example('jobs.earliest-ship-date.query.json');
      expectShape('jobs.earliest-ship-date.response.json', await call('GET', '/Jobs/earliest-ship-date', { query }));
    });

    it('a missing job is an RFC 7807 problem', async () => {
      const res = await call('GET', '/Jobs/999999');
      expectShape('error.problem.response.json', res);
      expect(res.contentType).toMatch(/^application\/problem\+json/);
    });
  });

  describe('assets', () => {
    it('GET /Assets with the example query, and /Assets/global', async () => {
      expectShape(
        'assets.list.response.json',
        await call('GET', '/Assets', { query: example('assets.list.query.json') }),
      );
      expectShape('assets.global.response.json', await call('GET', '/Assets/global'));
    });
    it('GET /Assets/types, /Assets/{assetTag}, /Assets/{assetTag}/files', async () => {
      expectShape('assets.types.response.json', await call('GET', '/Assets/types'));
      const asset = await call('GET', '/Assets/A10001');
      expectShape('assets.get.response.json', asset);
      // "An absent key means not authorised": attributes are for super-user callers only.
      expect(Object.keys(asset.body)).not.toContain('attributes');
      // A10002 (archived in the seed data) rather than the example's A10001: only archived
      // assets have historic files in the sandbox.
      expectShape('assets.files.response.json', await call('GET', '/Assets/A10002/files'));
    });
  });

  describe('account', () => {
    it('GET /account, /account/user, /account/users/{userId}', async () => {
      // The seeded accounts hold no tax certificates: their element shape goes unchecked.
      expectShape('account.get.response.json', await call('GET', '/account'), ['$.taxCertificates']);
      expectShape('account.user.response.json', await call('GET', '/account/user'));
      expectShape('account.user-by-id.response.json', await call('GET', '/account/users/501'));
    });
    it('GET /account/users and /account/transactions with the example queries', async () => {
      const users = await call('GET', '/account/users', { query: example('account.users.query.json') });
      expectShape('account.users.response.json', users);
      const txs = await call('GET', '/account/transactions', { query: example('account.transactions.query.json') });
      expectShape('account.transactions.response.json', txs);
    });
    it('GET /account/shipment-settings', async () => {
      expectShape('account.shipment-settings.response.json', await call('GET', '/account/shipment-settings'));
    });
  });

  describe('lookups', () => {
    it('countries, states, job statuses, process codes, size sets', async () => {
      expectShape('lookups.countries.response.json', await call('GET', '/Lookups/countries'));
      expectShape('lookups.states.response.json', await call('GET', '/Lookups/countries/US/states'));
      expectShape('lookups.job-statuses.response.json', await call('GET', '/Lookups/job-statuses'));
      expectShape('lookups.process-codes.response.json', await call('GET', '/Lookups/process-codes'));
      expectShape('lookups.size-sets.response.json', await call('GET', '/Lookups/size-sets'));
    });
  });

  describe('stock and promo codes', () => {
    it('GET /Stock with the example query, and /Stock/{code}', async () => {
      expectShape('stock.list.response.json', await call('GET', '/Stock', { query: example('stock.list.query.json') }));
      expectShape('stock.get.response.json', await call('GET', '/Stock/GD5000', { query: { includePricing: true } }));
    });
    it('GET /stock/{stockItemId}/shipping and /stock/shipping', async () => {
      expectShape('stock.item-shipping.response.json', await call('GET', '/stock/1/shipping'));
      const query = example('stock.shipping.query.json');
      expectShape('stock.shipping.response.json', await call('GET', '/stock/shipping', { query }));
    });
    it('a missing market is a 400 with field errors', async () => {
      expectShape('error.field-errors.response.json', await call('GET', '/stock/shipping'));
    });
    it('GET /promocode/validate/{code} with the example query', async () => {
      const query = example('promo.validate.query.json');
      expectShape('promo.validate.response.json', await call('GET', '/promocode/validate/DTFONLY15', { query }));
    });
  });

  it('every response fixture was compared', () => {
    expect([...checked].sort()).toEqual(jsonFiles('response').sort());
  });
});

/** The sandbox's custom-size code (metadata attributes DG-X/DG-Y); absent from the list call. */
const CUSTOM_CODE = 'DTF Custom Size';
