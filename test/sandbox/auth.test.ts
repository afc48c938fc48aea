import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { Caller, raw, start, tokenFor } from '../support/sandbox-http.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await start({ tokenTtlSeconds: 5 });
});
afterAll(() => sb.close());
beforeEach(() => sb.admin.reset());

const tokenUrl = (region: string): string =>
  `${sb.regions[region].authUrl}/realms/${sb.regions[region].realm}/protocol/openid-connect/token`;
const us = () => sb.accounts.find((a) => a.name === 'us-demo')!;

describe('sandbox auth', () => {
  it('lays out regions and accounts as the contract says', () => {
    expect(Object.keys(sb.regions).sort()).toEqual(['au', 'eu', 'nz', 'uk', 'us']);
    expect(sb.regions.us).toEqual({
      baseUrl: `${sb.url}/us/api`,
      authUrl: `${sb.url}/us/auth`,
      realm: 'htorder-us',
      statusUrl: `${sb.url}/us/status`,
    });
    expect(sb.accounts.map((a) => [a.name, a.region, a.customerId, a.role])).toEqual([
      ['us-demo', 'us', 1001, 'admin'],
      ['us-demo-user', 'us', 1001, 'user'],
      ['us-other', 'us', 1002, 'admin'],
      ['nz-demo', 'nz', 2001, 'admin'],
      ['uk-demo', 'uk', 3001, 'admin'],
    ]);
    expect(sb.info().accounts[0].clientId).toBe('us-demo');
  });

  it('derives client secrets from the seed', async () => {
    const other = await start({ seed: 2 });
    const same = await start({ seed: 1 });
    try {
      expect(other.accounts[0].clientSecret).not.toBe(us().clientSecret);
      expect(same.accounts[0].clientSecret).toBe(us().clientSecret);
    } finally {
      await other.close();
      await same.close();
    }
  });

  it('issues a token for form-encoded client credentials', async () => {
    const r = await raw(tokenUrl('us'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'us-demo',
        client_secret: us().clientSecret,
      }),
    });
    expect(r.status).toBe(200);
    expect(r.body.expires_in).toBe(5);
    expect(typeof r.body.access_token).toBe('string');
  });

  it('rejects a JSON token request with 400', async () => {
    const r = await raw(tokenUrl('us'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: 'us-demo',
        client_secret: us().clientSecret,
      }),
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request');
  });

  it("rejects a wrong secret, a wrong grant and another region's auth host", async () => {
    const post = (region: string, form: Record<string, string>) =>
      raw(tokenUrl(region), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form),
      });
    expect(
      (await post('us', { grant_type: 'client_credentials', client_id: 'us-demo', client_secret: 'nope' })).status,
    ).toBe(401);
    expect(
      (await post('us', { grant_type: 'password', client_id: 'us-demo', client_secret: us().clientSecret })).status,
    ).toBe(400);
    expect(
      (await post('nz', { grant_type: 'client_credentials', client_id: 'us-demo', client_secret: us().clientSecret }))
        .status,
    ).toBe(401);
  });

  it('answers 401 with an RFC 7807 body without or with a bad token', async () => {
    const r = await raw(`${sb.regions.us.baseUrl}/account`);
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.body).toMatchObject({ status: 401, title: 'Unauthorized', instance: '/us/api/account' });
    expect(typeof r.body.type).toBe('string');
    expect(typeof r.body.detail).toBe('string');
    const bad = await raw(`${sb.regions.us.baseUrl}/account`, { headers: { authorization: 'Bearer forged' } });
    expect(bad.status).toBe(401);
  });

  it('refuses a token from another region with 401', async () => {
    const nzToken = await tokenFor(sb, 'nz-demo');
    const onUs = await raw(`${sb.regions.us.baseUrl}/account`, { headers: { authorization: `Bearer ${nzToken}` } });
    expect(onUs.status).toBe(401);
    const onNz = await raw(`${sb.regions.nz.baseUrl}/account`, { headers: { authorization: `Bearer ${nzToken}` } });
    expect(onNz.status).toBe(200);
    expect(onNz.body.id).toBe(2001);
  });

  it('expires tokens after their TTL on the sandbox clock', async () => {
    const t = await tokenFor(sb, 'us-demo');
    const get = () => raw(`${sb.regions.us.baseUrl}/account`, { headers: { authorization: `Bearer ${t}` } });
    expect((await get()).status).toBe(200);
    await sb.admin.advanceClock(6_000);
    const r = await get();
    expect(r.status).toBe(401);
    expect(r.body.detail).toMatch(/expired/);
  });

  it('expireTokens invalidates every issued token', async () => {
    const c = new Caller(sb, 'us-demo');
    expect((await c.get('/account')).status).toBe(200);
    await sb.admin.expireTokens();
    expect((await c.get('/account')).status).toBe(401);
  });

  it('serves status.json and the status page per region', async () => {
    const j = await raw(`${sb.regions.nz.statusUrl}/status.json`);
    expect(j.status).toBe(200);
    expect(j.body).toMatchObject({ status: 'operational', region: 'nz' });
    const h = await raw(`${sb.regions.nz.statusUrl}/status`);
    expect(h.headers.get('content-type')).toContain('text/html');
    expect(h.text).toContain('New Zealand');
  });

  it('answers an unknown region or route with a 404 problem', async () => {
    expect((await raw(`${sb.url}/mars/api/account`)).status).toBe(404);
    const c = new Caller(sb, 'us-demo');
    const r = await c.get('/NoSuchThing');
    expect(r.status).toBe(404);
    expect(r.body.status).toBe(404);
  });
});
