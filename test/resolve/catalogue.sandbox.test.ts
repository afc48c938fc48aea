import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { createCatalogue } from '../../src/resolve/catalogue.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

let sandbox: Sandbox;
let client: ApiClient;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, now: new Date('2026-03-02T15:00:00Z') });
  client = createApiClient(sandboxConfig(sandbox, 'us-demo'), { retry: { maxAttempts: 1 } });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});
beforeEach(async () => {
  await sandbox.admin.clearFaults();
  await sandbox.admin.resetCalls();
});

const calls = async (key: string): Promise<number> => (await sandbox.admin.calls())[key] ?? 0;

describe('createCatalogue', () => {
  it('a 404 is undefined, and is asked once', async () => {
    const cat = createCatalogue(client);
    expect(await cat.priceCode('No Such Code')).toBeUndefined();
    expect(await cat.priceCode('No Such Code')).toBeUndefined();
    expect(await cat.asset('ZZZ')).toBeUndefined();
    expect(await cat.stock('ZZZ')).toBeUndefined();
    expect(await calls('GET /PriceCodes/{priceCode}')).toBe(1);
  });

  it('shares one in-flight request between concurrent callers', async () => {
    const cat = createCatalogue(client);
    const results = await Promise.all(Array.from({ length: 8 }, () => cat.priceCode('DTF Full Color 10" x 10"')));
    expect(new Set(results).size).toBe(1);
    expect(results[0]?.minimumQuantity).toBe(10);
    expect(await calls('GET /PriceCodes/{priceCode}')).toBe(1);
  });

  it('keys custom sizes by their dimensions', async () => {
    const cat = createCatalogue(client);
    const a = await cat.priceCode('DTF Custom Size', { dgX: 5, dgY: 5 });
    const b = await cat.priceCode('DTF Custom Size', { dgX: 10, dgY: 12 });
    await cat.priceCode('DTF Custom Size', { dgX: 5, dgY: 5 });
    expect(a?.priceBands?.[0].unitPrice).not.toBe(b?.priceBands?.[0].unitPrice);
    expect(await calls('GET /PriceCodes/{priceCode}')).toBe(2);
  });

  it('lists every listed price code in one call (custom sizes are never listed)', async () => {
    const cat = createCatalogue(client);
    const list = await cat.priceCodeList();
    expect(list.map((p) => p.priceCode)).toContain('Screen Print 1 Color 3" x 3"');
    expect(list.map((p) => p.priceCode)).not.toContain('DTF Custom Size');
    await cat.priceCodeList();
    expect(await calls('GET /PriceCodes/price-codes')).toBe(1);
  });

  it('a set of process codes is one key whatever the order and repetition', async () => {
    const cat = createCatalogue(client);
    await cat.promo('SPRING10', ['SCR', 'DTF']);
    await cat.promo('SPRING10', ['DTF', 'SCR', 'DTF']);
    await cat.earliestShipDate(['SCR', 'DTF']);
    await cat.earliestShipDate(['DTF', 'SCR']);
    await cat.earliestShipDate([]);
    expect(await calls('GET /promocode/validate/{code}')).toBe(1);
    expect(await calls('GET /Jobs/earliest-ship-date')).toBe(2);
  });

  it('states are keyed by country, whatever its case; stock comes with pricing', async () => {
    const cat = createCatalogue(client);
    expect((await cat.states('us')).find((s) => s.name === 'Texas')?.abbreviation).toBe('TX');
    await cat.states('US');
    expect(await calls('GET /Lookups/countries/{countryCode}/states')).toBe(1);
    expect((await cat.stock('GD5000'))?.priceBands?.length).toBeGreaterThan(0);
  });

  it('other failures reject', async () => {
    await sandbox.admin.setFaults([{ route: 'GET /Jobs/delivery-options', kind: 'status', status: 500 }]);
    await expect(createCatalogue(client).deliveryOptions()).rejects.toMatchObject({ name: 'ApiError', status: 500 });
  });
});
