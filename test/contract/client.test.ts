/**
 * The client against the specification: every response fixture in test/contract/spec-examples
 * is served, byte for byte, from a loopback server, and the real client (createApiClient) must
 * hand back the example's values; request and query fixtures must arrive with the spec's
 * names. Failures must surface as ApiError carrying the RFC 7807 members.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { ApiError, isNotFound } from '../../src/api/errors.js';
import type { ApiConfig } from '../../src/core/config/api-config.js';
import { EXAMPLES_DIR, entry, example, exampleText, jsonFiles } from './fixtures.js';

interface Seen {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: string;
}

interface Served {
  status: number;
  /** A fixture file, sent as its raw bytes; or a body built by the test. */
  file?: string;
  body?: unknown;
  contentType?: string;
}

const REALM = 'contract';
const TOKEN_PATH = `/auth/realms/${REALM}/protocol/openid-connect/token`;

let server: Server;
let base: string;
let client: ApiClient;
/** `METHOD /path?query` → what to answer; the query part is optional (matched first when given). */
const routes = new Map<string, Served>();
const seen: Seen[] = [];
const served = new Set<string>();

function serve(method: string, pathAndQuery: string, answer: Served): void {
  routes.set(`${method} ${pathAndQuery}`, answer);
}

function serveFixture(file: string, pathOverride?: string): void {
  const e = entry(file);
  const contentType = e.status !== null && e.status >= 400 ? 'application/problem+json' : 'application/json';
  serve(e.method, pathOverride ?? e.path, { status: e.status ?? 200, file, contentType });
}

/** The API requests the client made (not the token request). */
const apiCalls = (): Seen[] => seen.filter((s) => s.url.pathname.startsWith('/api/'));
const lastCall = (): Seen => apiCalls()[apiCalls().length - 1];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://loopback');
      seen.push({ method: req.method ?? '', url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      // Routes are written decoded (a price code contains `"` and spaces); the tests check the encoding.
      const path = decodeURIComponent(url.pathname.replace(/^\/api\//, '/'));
      const answer =
        routes.get(`${req.method} ${path}${url.search}`) ??
        (url.pathname === TOKEN_PATH ? routes.get(`POST ${TOKEN_PATH}`) : routes.get(`${req.method} ${path}`));
      if (!answer) {
        res.writeHead(599, { 'content-type': 'text/plain' });
        res.end(`no route for ${req.method} ${url.pathname}${url.search}`);
        return;
      }
      if (answer.file) served.add(answer.file);
      if (answer.status === 204) {
        res.writeHead(204);
        res.end();
        return;
      }
      const raw = answer.file ? readFileSync(`${EXAMPLES_DIR}${answer.file}`) : JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' });
      res.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config: ApiConfig = {
    baseUrl: `${base}/api`,
    authUrl: `${base}/auth`,
    realm: REALM,
    clientId: 'contract-client',
    clientSecret: 'contract-secret',
    statusUrl: null,
    stateDir: '/nonexistent',
    concurrency: 2,
    appName: 'API',
    timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
    allowInsecure: false,
    profile: null,
  };
  // No retries: a fixture must be understood the first time.
  client = createApiClient(config, { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
  serve('POST', TOKEN_PATH, { status: 200, file: 'token.response.json', contentType: 'application/json' });
});

afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  routes.forEach((_v, k) => {
    if (!k.startsWith(`POST ${TOKEN_PATH}`)) routes.delete(k);
  });
});

/** Every key of a query fixture must reach the server under the spec's name, with its value. */
function expectQuery(file: string, call: Seen): void {
  const query = example<Record<string, unknown>>(file);
  const sent = Object.fromEntries(call.url.searchParams);
  expect(sent).toEqual(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])));
}

describe('the client reads the spec examples', () => {
  it('token: sends the example form fields, then the example token as a bearer', async () => {
    serveFixture('lookups.job-statuses.response.json');
    await client.lookups.jobStatuses();
    const tokenRequest = seen.find((s) => s.url.pathname === TOKEN_PATH);
    expect(tokenRequest?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const expected = new URLSearchParams(exampleText('token.request.txt').trim());
    const sent = new URLSearchParams(tokenRequest?.body);
    expect([...sent.keys()].sort()).toEqual([...expected.keys()].sort());
    expect(sent.get('grant_type')).toBe(expected.get('grant_type'));
    expect(sent.get('client_id')).toBe('contract-client');
    expect(sent.get('client_secret')).toBe('contract-secret');
    expect(lastCall().headers.authorization).toBe(`Bearer ${example('token.response.json').access_token}`);
    served.add('token.response.json');
  });

  describe('price codes', () => {
    it("processes (the spec's inline example)", async () => {
      serveFixture('price-codes.processes.response.json');
      const res = await client.priceCodes.processes();
      expect(res).toEqual(example('price-codes.processes.response.json'));
      expect(res.processes[0].processCode).toBe('DTF');
    });
    it('list, with the example query', async () => {
      serveFixture('price-codes.list.response.json');
      const res = await client.priceCodes.list(example('price-codes.list.query.json'));
      expect(res).toEqual(example('price-codes.list.response.json'));
      expect(res[0].priceBands?.[1]).toEqual({ from: 50, to: null, unitPrice: 1.9 });
      expect(res[0].attributes?.[0].enumerableValues?.[0].value).toBe('4');
      expectQuery('price-codes.list.query.json', lastCall());
    });
    it('one code: the path is percent-encoded, dgX/dgY go in the query', async () => {
      const code = example('price-codes.get.response.json').priceCode as string;
      serveFixture('price-codes.get.response.json', `/PriceCodes/${code}`);
      const res = await client.priceCodes.get(code, example('price-codes.get.query.json'));
      expect(res).toEqual(example('price-codes.get.response.json'));
      expect(lastCall().url.pathname).toBe(`/api/PriceCodes/${encodeURIComponent(code)}`);
      expectQuery('price-codes.get.query.json', lastCall());
    });
  });

  describe('jobs', () => {
    it('create: sends the example candidate, reads the example response', async () => {
      serveFixture('jobs.create.response.json');
      const request = example('jobs.create.request.json');
      const res = await client.jobs.create(request);
      expect(res).toEqual(example('jobs.create.response.json'));
      expect(res.jobNumber).toBe(700123);
      expect(res.jobLineDetails[0].newAssetSku).toBe('A20001');
      expect(JSON.parse(lastCall().body)).toEqual(request);
      expect(lastCall().headers['x-application-name']).toBe('API');
    });
    it('validateOnly: the quoted message (status and body shape not shown: served as text)', async () => {
      const text = exampleText('jobs.validate.response.txt');
      serve('POST', '/Jobs', { status: 200, body: text.trim(), contentType: 'application/json' });
      const res = await client.jobs.validate(example('jobs.validate.request.json'));
      expect(res.message).toBe(text.trim());
      expect(JSON.parse(lastCall().body)).toEqual(example('jobs.validate.request.json'));
      served.add('jobs.validate.response.txt');
    });
    it("a validation failure (the spec's inline example) becomes an ApiError with validationMessages", async () => {
      serveFixture('jobs.validation-failure.response.json');
      const err = await client.jobs.create(example('jobs.validate.request.json')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      const e = err as ApiError;
      const body = example('jobs.validation-failure.response.json');
      expect(e.status).toBe(400);
      expect(e.validationMessages).toEqual(body.validationMessages);
      expect(e.body).toEqual(body);
    });
    it('get, patch and cancel', async () => {
      serveFixture('jobs.get.response.json', '/Jobs/700123');
      const job = await client.jobs.get(700123);
      expect(job).toEqual(example('jobs.get.response.json'));
      expect(job.permissions).toEqual({ canEdit: true, lockedReason: null });
      expect(job.isCancelable).toBe(false);
      expect(job.shippingAddresses[0].trackingNumber).toBe('1Z999AA10123456784');

      serveFixture('jobs.patch.response.json', '/Jobs/700123');
      const patched = await client.jobs.patch(700123, example('jobs.patch.request.json'));
      expect(patched).toEqual(example('jobs.patch.response.json'));
      expect(lastCall().method).toBe('PATCH');
      expect(JSON.parse(lastCall().body)).toEqual(example('jobs.patch.request.json'));

      serve('POST', '/Jobs/700123/cancel', { status: 204 });
      await expect(client.jobs.cancel(700123)).resolves.toBeUndefined();
    });
    it('active: the envelope as-is, the example query sent unchanged', async () => {
      serveFixture('jobs.active.response.json');
      const res = await client.jobs.active(example('jobs.active.query.json'));
      expect(res).toEqual(example('jobs.active.response.json'));
      expectQuery('jobs.active.query.json', lastCall());
    });
    it('active, every page: follows pageNumber and hasNextPage', async () => {
      const page2 = example('jobs.active.response.json');
      const page3 = { ...page2, pageNumber: 3, hasNextPage: false, items: [{ ...page2.items[0], jobNumber: 700124 }] };
      serveFixture('jobs.active.response.json', '/Jobs/active?page=2');
      serve('GET', '/Jobs/active?page=3', { status: 200, body: page3 });
      const numbers: number[] = [];
      for await (const j of client.jobs.iterateActive({ page: 2 })) numbers.push(j.jobNumber);
      expect(numbers).toEqual([700123, 700124]);
      expect(
        apiCalls()
          .slice(-2)
          .map((c) => c.url.searchParams.get('page')),
      ).toEqual(['2', '3']);
    });
    it('delivery options and earliest ship date', async () => {
      serveFixture('jobs.delivery-options.response.json');
      expect(await client.jobs.deliveryOptions()).toEqual(example('jobs.delivery-options.response.json'));
      serveFixture('jobs.earliest-ship-date.response.json');
      const q = example('jobs.earliest-ship-date.query.json');
      const res = await client.jobs.earliestShipDate(q);
      expect(res).toEqual(example('jobs.earliest-ship-date.response.json'));
      expect(res.dateExclusions[0].dateFrom).toBe('2026-04-03');
      expectQuery('jobs.earliest-ship-date.query.json', lastCall());
    });
  });

  describe('assets', () => {
    it('list: the envelope as-is, the example query sent unchanged', async () => {
      serveFixture('assets.list.response.json');
      const res = await client.assets.list(example('assets.list.query.json'));
      expect(res).toEqual(example('assets.list.response.json'));
      expect(res.entities[0].assetTag).toBe('A10001');
      expectQuery('assets.list.query.json', lastCall());
    });
    it('list, every page: follows currentPage and hasNext', async () => {
      const page2 = example('assets.list.response.json');
      const page3 = {
        ...page2,
        currentPage: 3,
        hasNext: false,
        entities: [{ ...page2.entities[0], assetTag: 'A10002' }],
      };
      serveFixture('assets.list.response.json', '/Assets?page=2');
      serve('GET', '/Assets?page=3', { status: 200, body: page3 });
      const tags: (string | null)[] = [];
      for await (const a of client.assets.iterate({ page: 2 })) tags.push(a.assetTag);
      expect(tags).toEqual(['A10001', 'A10002']);
    });
    it('global, types, one asset, its files and its jobs', async () => {
      serveFixture('assets.global.response.json');
      expect(await client.assets.global()).toEqual(example('assets.global.response.json'));
      serveFixture('assets.types.response.json');
      expect(await client.assets.types()).toEqual(example('assets.types.response.json'));
      serveFixture('assets.get.response.json', '/Assets/A10001');
      const asset = await client.assets.get('A10001');
      expect(asset).toEqual(example('assets.get.response.json'));
      expect(asset.reset).toBe(10);
      serveFixture('assets.files.response.json', '/Assets/A10001/files');
      const files = await client.assets.files('A10001');
      expect(files).toEqual(example('assets.files.response.json'));
      expect(files.historicFiles[0].action).toBe('Replaced');
      serveFixture('assets.jobs.response.json', '/Assets/A10001/jobs');
      expect(await client.assets.jobs('A10001')).toEqual(example('assets.jobs.response.json'));
    });
  });

  describe('account', () => {
    it('profile, current user, one user, shipment settings', async () => {
      serveFixture('account.get.response.json');
      const profile = await client.account.get();
      expect(profile).toEqual(example('account.get.response.json'));
      expect(profile.entityAddress?.countryCode).toBe('US');
      serveFixture('account.user.response.json');
      expect(await client.account.user()).toEqual(example('account.user.response.json'));
      serveFixture('account.user-by-id.response.json', '/account/users/501');
      expect(await client.account.userById(501)).toEqual(example('account.user-by-id.response.json'));
      serveFixture('account.shipment-settings.response.json');
      const settings = await client.account.shipmentSettings();
      expect(settings).toEqual(example('account.shipment-settings.response.json'));
      expect(settings.freightRates[0].chargeType).toBe('fixed_per_package');
    });
    it('users and transactions, with the example queries', async () => {
      serveFixture('account.users.response.json');
      expect(await client.account.users(example('account.users.query.json'))).toEqual(
        example('account.users.response.json'),
      );
      expectQuery('account.users.query.json', lastCall());
      serveFixture('account.transactions.response.json');
      const txs = await client.account.transactions(example('account.transactions.query.json'));
      expect(txs).toEqual(example('account.transactions.response.json'));
      expectQuery('account.transactions.query.json', lastCall());
      const all = [];
      for await (const t of client.account.iterateTransactions()) all.push(t);
      expect(all).toEqual(example('account.transactions.response.json').entities);
    });
  });

  describe('lookups', () => {
    it('countries, states, job statuses, process codes, size sets', async () => {
      serveFixture('lookups.countries.response.json');
      expect(await client.lookups.countries()).toEqual(example('lookups.countries.response.json'));
      serveFixture('lookups.states.response.json', '/Lookups/countries/US/states');
      expect(await client.lookups.states('US')).toEqual(example('lookups.states.response.json'));
      serveFixture('lookups.job-statuses.response.json');
      expect(await client.lookups.jobStatuses()).toEqual(example('lookups.job-statuses.response.json'));
      serveFixture('lookups.process-codes.response.json');
      const codes = await client.lookups.processCodes();
      expect(codes).toEqual(example('lookups.process-codes.response.json'));
      expect(codes[0].metadata.physicalStockRequired).toBe(false);
      serveFixture('lookups.size-sets.response.json');
      expect(await client.lookups.sizeSets()).toEqual(example('lookups.size-sets.response.json'));
    });
  });

  describe('stock and promo codes', () => {
    it('stock list (example query), one item, shipping per item and per market', async () => {
      serveFixture('stock.list.response.json');
      expect(await client.stock.list(example('stock.list.query.json'))).toEqual(example('stock.list.response.json'));
      expectQuery('stock.list.query.json', lastCall());
      serveFixture('stock.get.response.json', '/Stock/GD5000');
      const item = await client.stock.get('GD5000');
      expect(item).toEqual(example('stock.get.response.json'));
      expect(item.shippingConfigs?.[0].shipmentTypeOptions[0].price).toBeNull();
      serveFixture('stock.item-shipping.response.json', '/stock/1/shipping');
      expect(await client.stock.shippingForItem(1)).toEqual(example('stock.item-shipping.response.json'));
      serveFixture('stock.shipping.response.json');
      expect(await client.stock.shipping(example('stock.shipping.query.json'))).toEqual(
        example('stock.shipping.response.json'),
      );
      expectQuery('stock.shipping.query.json', lastCall());
    });
    it('promo code validation, with the example query', async () => {
      serveFixture('promo.validate.response.json', '/promocode/validate/DTFONLY15');
      const res = await client.promo.validate('DTFONLY15', example('promo.validate.query.json'));
      expect(res).toEqual(example('promo.validate.response.json'));
      expectQuery('promo.validate.query.json', lastCall());
    });
  });

  describe('errors', () => {
    it('an RFC 7807 problem becomes an ApiError carrying its members', async () => {
      serveFixture('error.problem.response.json', '/Jobs/999999');
      const err = await client.jobs.get(999999).catch((e: unknown) => e);
      const problem = example('error.problem.response.json');
      expect(err).toBeInstanceOf(ApiError);
      const e = err as ApiError;
      expect({ type: e.type, title: e.title, status: e.status, detail: e.detail, instance: e.instance }).toEqual(
        problem,
      );
      expect(isNotFound(e)).toBe(true);
      expect(e.toProblem()).toEqual(problem);
    });
    it('a 400 with field errors becomes an ApiError with `errors`', async () => {
      serveFixture('error.field-errors.response.json');
      const err = await client.stock.shipping({ market: '' }).catch((e: unknown) => e);
      const body = example('error.field-errors.response.json');
      expect(err).toBeInstanceOf(ApiError);
      const e = err as ApiError;
      expect(e.status).toBe(400);
      expect(e.errors).toEqual(body.errors);
      expect(e.detail).toBe(body.detail);
      expect(e.message).toContain('market: The market field is required.');
    });
  });

  it('every response fixture was served to the client', () => {
    expect([...served].filter((f) => f.endsWith('.json')).sort()).toEqual(jsonFiles('response').sort());
  });
});
