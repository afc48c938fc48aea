import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { Caller, start } from '../support/sandbox-http.js';

let sb: Sandbox;
let us: Caller;
let user: Caller;
let other: Caller;
beforeAll(async () => {
  sb = await start();
  us = new Caller(sb, 'us-demo');
  user = new Caller(sb, 'us-demo-user');
  other = new Caller(sb, 'us-other');
});
afterAll(() => sb.close());

const all = async (query: string): Promise<any[]> => (await us.get(`/Assets?pageSize=1000&${query}`)).body.entities;

describe('assets', () => {
  it('has hundreds of assets, the named ones fixed, in a paging envelope (default 25)', async () => {
    const r = await us.get('/Assets');
    expect(r.body).toMatchObject({
      pageSize: 25,
      currentPage: 1,
      returnedResults: 25,
      totalResults: 400,
      totalPages: 16,
      hasNext: true,
      hasPrevious: false,
      previousUrl: null,
    });
    expect(r.body.nextUrl).toBe(`${sb.regions.us.baseUrl}/Assets?page=2&pageSize=25`);
    expect(r.body.entities.slice(0, 3).map((a: any) => a.assetTag)).toEqual(['A10001', 'A10002', 'A10003']);
    const p2 = await us.get('/Assets?page=2&filter=logo');
    expect(p2.body.filter).toBe('logo');
    expect(p2.body.previousUrl).toContain('filter=logo');
    const a1 = (await us.get('/Assets/A10001')).body;
    expect(a1).toMatchObject({
      assetTag: 'A10001',
      isArchived: false,
      priceCode: 'DTF Full Color 10" x 10"',
      customerId: 1001,
      externalId: 'ext-0001',
    });
    expect('attributes' in a1).toBe(false);
    expect((await us.get('/Assets/A10002')).body.isArchived).toBe(true);
    expect((await us.get('/Assets/A10003')).body.priceCode).toBeNull();
  });

  it('is deterministic per seed and varies with it', async () => {
    const again = await start({ seed: 1 });
    const seven = await start({ seed: 7 });
    try {
      const pick = async (s: Sandbox) =>
        (await new Caller(s, 'us-demo').get('/Assets?page=3')).body.entities.map((a: any) => [
          a.assetTag,
          a.description,
          a.isArchived,
        ]);
      expect(await pick(again)).toEqual(await pick(sb));
      expect(await pick(seven)).not.toEqual(await pick(sb));
      expect((await new Caller(seven, 'us-demo').get('/Assets/A10001')).body.description).toBe(
        'Front logo, full colour',
      );
    } finally {
      await again.close();
      await seven.close();
    }
  });

  it('isArchived true/false/omitted', async () => {
    const yes = await all('isArchived=true');
    const no = await all('isArchived=false');
    expect(yes.length).toBeGreaterThan(10);
    expect(yes.every((a) => a.isArchived)).toBe(true);
    expect(no.every((a) => !a.isArchived)).toBe(true);
    expect(yes.length + no.length).toBe(400);
  });

  it('priceCodeContains: any substring, case-insensitive, nulls excluded', async () => {
    const r = await all('priceCodeContains=screen,SUBLIM');
    expect(r.length).toBeGreaterThan(0);
    expect(r.every((a) => a.priceCode && /screen|sublim/i.test(a.priceCode))).toBe(true);
    expect(r.some((a) => a.assetTag === 'A10003')).toBe(false);
  });

  it('priceCodeNotContains: none of the substrings, nulls included', async () => {
    const r = await all('priceCodeNotContains=dtf');
    expect(r.every((a) => a.priceCode === null || !/dtf/i.test(a.priceCode))).toBe(true);
    expect(r.some((a) => a.assetTag === 'A10003')).toBe(true);
    expect(r.some((a) => a.priceCode === null)).toBe(true);
  });

  it('include/excludeProcesses, filter, sorting', async () => {
    expect((await all('includeProcesses=SCR')).every((a) => a.processCode === 'SCR')).toBe(true);
    expect((await all('excludeProcesses=DTF,SUB')).every((a) => a.processCode === 'SCR')).toBe(true);
    const f = await all('filter=A1000');
    expect(f.map((a) => a.assetTag)).toEqual([
      'A10001',
      'A10002',
      'A10003',
      'A10004',
      'A10005',
      'A10006',
      'A10007',
      'A10008',
      'A10009',
    ]);
    const desc = (await us.get('/Assets?sortDirection=Descending')).body.entities[0].assetTag;
    expect(desc).toBe('A10400');
    expect((await us.get('/Assets?sortColumn=Nope')).status).toBe(400);
  });

  it('global assets, types, files; other accounts see 404', async () => {
    const g = (await us.get('/Assets/global?pageSize=100')).body;
    expect(g.entities[0]).toMatchObject({ assetTag: 'G20001', isGlobal: true });
    expect(g.entities.every((a: any) => a.isGlobal)).toBe(true);
    expect((await other.get('/Assets/G20001')).status).toBe(200);
    expect((await us.get('/Assets/types')).body).toContainEqual({ process: 'DTF', assetType: 'DTF Transfer' });
    const files = (await us.get('/Assets/A10001/files')).body;
    expect(files.assetTag).toBe('A10001');
    expect(files.currentFiles[0]).toMatchObject({ isImage: true });
    expect((await us.get('/Assets/A10001/files?size=75')).status).toBe(400);
    const theirs = await other.get('/Assets/A10001');
    const none = await other.get('/Assets/A99999');
    expect([theirs.status, none.status]).toEqual([404, 404]);
    expect((await other.get('/Assets/A10001/files')).status).toBe(404);
    expect((await other.get('/Assets')).body.entities[0].assetTag).toBe('B40001');
  });
});

describe('account', () => {
  it('profile, current user, shipment settings, transactions', async () => {
    expect((await us.get('/account')).body).toMatchObject({ id: 1001, currency: 'USD', priceTierCode: 'GOLD' });
    expect((await us.get('/account/user')).body).toMatchObject({ id: 501, customerId: 1001 });
    expect((await user.get('/account/user')).body.id).toBe(502);
    expect((await us.get('/account/shipment-settings')).body.availableCarriers).toEqual(['UPSGND', 'UPS2DA', 'FDXON']);
    const tx = (await us.get('/account/transactions')).body;
    expect(tx).toMatchObject({ pageSize: 20, totalResults: 45, currentPage: 1 });
    const ids = tx.entities.map((t: any) => t.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const done = (await us.get('/account/transactions?completedOnly=true&pageSize=100')).body.entities;
    expect(done.every((t: any) => t.completedAt !== null)).toBe(true);
    const byAmount = (
      await us.get('/account/transactions?sortBy=AmountSettlement&sortDirection=ASC&pageSize=100')
    ).body.entities.map((t: any) => t.amountSettlement);
    expect(byAmount).toEqual([...byAmount].sort((a, b) => a - b));
  });

  it('users: admin only, inactive hidden by default, sorting and text filter', async () => {
    const forbidden = await user.get('/account/users');
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ status: 403, title: 'Forbidden' });
    expect((await user.get('/account/users/501')).status).toBe(403);
    const list = (await us.get('/account/users')).body;
    expect(list.pageSize).toBe(50);
    expect(list.entities.some((u: any) => u.id === 503)).toBe(false);
    const withInactive = (await us.get('/account/users?includeInactive=true')).body.entities;
    expect(withInactive.some((u: any) => u.id === 503)).toBe(true);
    const names = list.entities.map((u: any) => u.lastName);
    expect(names).toEqual([...names].sort((a: string, b: string) => a.localeCompare(b)));
    const f = (await us.get('/account/users?textFilter=uma')).body.entities;
    expect(f.map((u: any) => u.id)).toContain(502);
    expect((await us.get('/account/users/502')).body.userName).toBe('uma.user');
    expect((await us.get('/account/users/601')).status).toBe(404);
  });
});

describe('stock', () => {
  it('lists stock without archived or hidden items; code is exact and untrimmed', async () => {
    const codes = (await us.get('/Stock')).body.map((s: any) => s.stockCode);
    expect(codes).toContain('GD5000');
    expect(codes).not.toContain('OLD100');
    expect(codes).not.toContain('HIDDEN-1');
    expect((await us.get('/Stock?includeArchived=true')).body.map((s: any) => s.stockCode)).toContain('OLD100');
    expect((await us.get('/Stock?includeArchived=true&code=HIDDEN-1')).body).toEqual([]);
    expect((await us.get('/Stock?code=GD5000-WHT')).body.map((s: any) => s.stockCode)).toEqual(['GD5000']);
    expect((await us.get('/Stock?code=%20GD5000')).body).toEqual([]);
    const long = await us.get(`/Stock?code=${'X'.repeat(31)}`);
    expect(long.status).toBe(400);
    expect(long.body.errors.code).toBeDefined();
    expect((await us.get('/Stock?code=GD5000&filter=softstyle')).body).toEqual([]);
  });

  it('markets filter: trimmed, uppercased, any active config', async () => {
    const nzish = (await us.get('/Stock?markets=%20nz%20,nz')).body.map((s: any) => s.stockCode);
    expect(nzish).toEqual(['GD5000']);
    const tote = (await us.get('/Stock?code=TOTE-1')).body[0];
    expect(tote.markets).toEqual([]);
    expect((await us.get('/Stock?markets=US')).body.map((s: any) => s.stockCode)).not.toContain('TOTE-1');
  });

  it('one item with variants and shippingConfigs; equipment uses Qty', async () => {
    const gd = (await us.get('/Stock/GD5000?includePricing=true')).body;
    expect(gd.stockVariants.map((v: any) => [v.variantCode, v.sizesCsv])).toEqual([
      ['GD5000-BLK', 'S,M,L,XL,2XL'],
      ['GD5000-WHT', 'S,M,L,XL,2XL'],
    ]);
    expect(gd.shippingConfigs.map((c: any) => c.id)).toEqual([101, 102]);
    expect('stockItemId' in gd.shippingConfigs[0]).toBe(false);
    expect(gd.priceBands[0].unitPrice).toBe(4.5);
    expect((await us.get('/Stock/GD5000')).body.priceBands).toBeNull();
    expect((await us.get('/Stock/PRESS-16-STD')).body.stockVariants[0].sizesCsv).toBe('Qty');
    expect((await us.get('/Stock/NOPE')).status).toBe(404);
  });

  it('stock shipping endpoints', async () => {
    const byItem = (await us.get('/stock/2/shipping')).body;
    expect(byItem.map((c: any) => [c.id, c.active])).toEqual([[201, true]]);
    expect((await us.get('/stock/abc/shipping')).status).toBe(400);
    expect((await us.get('/stock/0/shipping')).status).toBe(400);
    const us1 = (await us.get('/stock/shipping?market=US')).body;
    expect(us1.every((c: any) => c.markets.includes('US') && c.active)).toBe(true);
    const missing = await us.get('/stock/shipping');
    expect(missing.status).toBe(400);
    expect(missing.body.errors.market).toBeDefined();
  });
});

describe('promo codes', () => {
  it('validates with 200 whatever the outcome', async () => {
    const v = (code: string, q = '') => us.get(`/promocode/validate/${code}${q}`);
    const ok = await v('SPRING10');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      isValid: true,
      promoCode: 'SPRING10',
      discount: 10,
      isFixed: false,
      applicableProcessCodes: null,
    });
    expect((await v('WELCOME500')).body).toMatchObject({ isValid: true, discount: 500, isFixed: true });
    const expired = await v('EXPIRED20');
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({ isValid: false, message: 'Promo code has expired.' });
    expect((await v('NOPE')).body).toMatchObject({ isValid: false, message: 'Promo code not found.' });
    expect((await v('DTFONLY15', '?processCodes=DTF,SCR')).body).toMatchObject({
      isValid: true,
      applicableProcessCodes: ['DTF'],
    });
    expect((await v('DTFONLY15', '?processCodes=SCR')).body.isValid).toBe(false);
    expect((await v('DTFONLY15')).body).toMatchObject({ isValid: true, applicableProcessCodes: null });
  });
});

describe('query values', () => {
  it('a malformed paging, boolean or sort value is a 400 naming each field', async () => {
    const errors = async (path: string): Promise<unknown> => {
      const r = await us.get(path);
      expect(r.status, path).toBe(400);
      return r.body.errors;
    };
    expect(await errors('/Assets?page=0&pageSize=x&isArchived=maybe&sortColumn=colour&sortDirection=up')).toEqual({
      page: ['page must be a positive integer.'],
      pageSize: ['pageSize must be a positive integer.'],
      isArchived: ['isArchived must be true or false.'],
      sortColumn: ["'colour' is not a sortable column."],
      sortDirection: ['sortDirection must be Ascending or Descending.'],
    });
    expect(
      await errors('/Jobs/active?page=-1&excludeJobNumber=1.5&customerUserId=me&includeClosedJobs=1&sortColumn=x'),
    ).toEqual({
      page: ['page must be a positive integer.'],
      excludeJobNumber: ['excludeJobNumber must be an integer.'],
      customerUserId: ['customerUserId must be an integer.'],
      includeClosedJobs: ['includeClosedJobs must be true or false.'],
      sortColumn: ["'x' is not a sortable column."],
    });
    expect(await errors('/account/users?pageSize=0&includeInactive=yes&sortBy=age&sortDirection=up')).toEqual({
      pageSize: ['pageSize must be a positive integer.'],
      sortBy: ["'age' is not a valid sortBy value."],
      sortDirection: ['sortDirection must be ASC or DESC.'],
      includeInactive: ['includeInactive must be true or false.'],
    });
    expect(await errors('/account/transactions?page=one&completedOnly=no')).toEqual({
      page: ['page must be a positive integer.'],
      completedOnly: ['completedOnly must be true or false.'],
    });
    expect(await errors('/PriceCodes/price-codes?page=1&pageSize=0')).toEqual({
      pageSize: ['pageSize must be a positive integer.'],
    });
    expect(await errors('/Stock?page=0&pageSize=2')).toEqual({ page: ['page must be a positive integer.'] });
    // Stock's boolean options are false unless they say true.
    expect((await us.get('/Stock?includeArchived=maybe&includePricing=TRUE')).status).toBe(200);
    // Blank values are absent; limits and defaults hold.
    expect((await us.get('/Assets?page=%20&pageSize=')).body).toMatchObject({ currentPage: 1, pageSize: 25 });
    expect((await us.get('/Jobs/active?pageSize=500')).body.pageSize).toBe(100);
    expect((await us.get('/PriceCodes/price-codes?pageSize=2&page=2')).body).toHaveLength(2);
  });
});
