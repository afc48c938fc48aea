import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { VALIDATE_ONLY_MESSAGE } from '../../src/api/types.js';
import { Caller, dtfLine, enc, start, usJob, type Res } from '../support/sandbox-http.js';

let sb: Sandbox;
let us: Caller;
beforeAll(async () => {
  sb = await start();
  us = new Caller(sb, 'us-demo');
});
afterAll(() => sb.close());
beforeEach(() => sb.admin.reset());

const post = (body: unknown, headers?: Record<string, string>): Promise<Res> => us.post('/Jobs', body, headers);
const dry = (body: Record<string, unknown>): Promise<Res> => post({ ...body, validateOnly: true });
const codes = (r: Res): string[] => r.body.validationMessages.map((m: any) => m.errorCode);

/** Expect a 400 job-validation body whose messages include one matching `pattern`. */
function expect400(r: Res, pattern: RegExp): void {
  expect(r.status, r.text).toBe(400);
  expect(r.body.isValid).toBe(false);
  expect(
    r.body.validationMessages.some((m: any) => pattern.test(m.message)),
    JSON.stringify(r.body),
  ).toBe(true);
}

async function expect500(body: Record<string, unknown>, pattern: RegExp): Promise<void> {
  const r = await post(body);
  expect(r.status, r.text).toBe(500);
  expect(r.body).toMatchObject({ status: 500, title: 'Internal Server Error', instance: '/us/api/Jobs' });
  // The same payload as a dry run names the cause.
  expect400(await dry(body), pattern);
  expect(await sb.admin.jobs()).toEqual([]);
}

describe('POST /Jobs: documented 500s (real messages with validateOnly)', () => {
  it('empty items', () => expect500(usJob({ items: [] }), /items is empty/));
  it('missing dateDue', () => expect500(usJob({ dateDue: undefined }), /dateDue is missing/));
  it('unknown asset code', () =>
    expect500(
      usJob({ items: [{ itemType: 'Asset', code: 'A99999', quantity: 50 }] }),
      /items\[0\].*A99999.*does not exist/,
    ));
  it('size key outside the size run', () =>
    expect500(
      usJob({
        items: [{ itemType: 'Stock', code: 'GD5000', variantCode: 'GD5000-BLK', sizeQuantities: { M: 5, XXL: 2 } }],
      }),
      /'XXL' is not in the size run/,
    ));
  it('unroutable: no street address', () =>
    expect500(
      usJob({ deliveryAddress: { ...usJob().deliveryAddress, streetAddress: undefined } }),
      /cannot be routed.*streetAddress/,
    ));
  it('unroutable: unknown country', () =>
    expect500(
      usJob({ deliveryAddress: { ...usJob().deliveryAddress, countryCodeISO2: 'ZZ' } }),
      /cannot be routed.*ZZ/,
    ));
  it('unroutable: a mis-cased key is ignored, so there is no country', () => {
    const { countryCodeISO2: _c, ...rest } = usJob().deliveryAddress;
    return expect500(
      usJob({ deliveryAddress: { ...rest, countryCodeIso2: 'US' } }),
      /cannot be routed.*countryCodeISO2/,
    );
  });
  it('unroutable: a US address without a state', () =>
    expect500(
      usJob({ deliveryAddress: { ...usJob().deliveryAddress, stateCode: undefined } }),
      /cannot be routed.*state/,
    ));
});

describe('POST /Jobs: 400 validation messages', () => {
  it('a three-letter countryCodeISO2', async () => {
    const r = await post(usJob({ deliveryAddress: { ...usJob().deliveryAddress, countryCodeISO2: 'USA' } }));
    expect400(r, /countryCodeISO2: 'USA' must be exactly 2 characters/);
    expect(codes(r)).toEqual(['InvalidCountryCode']);
  });

  it('a delivery label instead of its code', async () => {
    expect400(
      await post(usJob({ deliveryAddress: { ...usJob().deliveryAddress, deliveryMethod: 'UPS Ground' } })),
      /deliveryMethod: 'UPS Ground' is not a valid delivery method code/,
    );
  });

  it('an unknown state code', async () => {
    expect400(
      await post(usJob({ deliveryAddress: { ...usJob().deliveryAddress, stateCode: 'ZZ' } })),
      /stateCode: 'ZZ'/,
    );
  });

  it('quantity under the minimum, naming the line, unless isSample', async () => {
    const r = await post(
      usJob({
        items: [
          dtfLine({ externalArtworkUrl: 'https://x.example/a.png' }),
          dtfLine({ quantity: 50 }),
          dtfLine({ quantity: 5 }),
        ],
      }),
    );
    expect(r.status).toBe(400);
    expect(r.body.validationMessages).toContainEqual({
      errorCode: 'BelowMinimumQuantity',
      message: `items[2]: quantity 5 is below the minimum quantity 10 for 'DTF Full Color 10" x 10"'.`,
    });
    const sample = await post(
      usJob({
        items: [
          {
            itemType: 'PriceCode',
            code: 'Screen Print 1 Color 3" x 3"',
            quantity: 1,
            isSample: true,
            customerReference: 's',
          },
        ],
      }),
    );
    expect(sample.status, sample.text).toBe(201);
    expect(sample.body.totalJobCost).toBe(5);
    expect400(await post(usJob({ items: [dtfLine({ quantity: 1, isSample: true })] })), /no sample is available/);
  });

  it('an archived asset is not in an orderable state', async () => {
    expect400(
      await post(usJob({ items: [{ itemType: 'Asset', code: 'A10002', quantity: 50 }] })),
      /items\[0\].*'A10002' is not in an orderable state/,
    );
  });

  it('customerReference is required on PriceCode lines', async () => {
    expect400(
      await post(usJob({ items: [dtfLine({ customerReference: undefined })] })),
      /items\[0\]\.customerReference is required/,
    );
  });

  it('artwork URL on all PriceCode lines or none', async () => {
    const r = await post(
      usJob({
        items: [
          dtfLine({ externalArtworkUrl: 'https://cdn.example.com/a.png' }),
          dtfLine({ customerReference: 'back' }),
        ],
      }),
    );
    expect400(r, /items\[1\]\.externalArtworkUrl is required/);
    const none = await post(usJob({ items: [dtfLine(), dtfLine({ customerReference: 'back' })] }));
    expect(none.status).toBe(201);
    const all = await post(
      usJob({
        orderNumber: 'PO-2',
        items: [
          dtfLine({ externalArtworkUrl: 'https://a.example/1.png' }),
          dtfLine({ externalArtworkUrl: 'https://a.example/2.png' }),
        ],
      }),
    );
    expect(all.status).toBe(201);
    expect400(
      await post(usJob({ items: [dtfLine({ externalArtworkUrl: 'ftp://nope' })] })),
      /not an absolute http\(s\) URL/,
    );
  });

  it('attribute rules: required, select values, text length, int range', async () => {
    expect400(
      await post(usJob({ items: [dtfLine({ attributes: {} })] })),
      /items\[0\]\.attributes\.Colors is required/,
    );
    expect400(
      await post(usJob({ items: [dtfLine({ attributes: { colors: '4' } })] })),
      /attributes\.Colors is required/,
    );
    expect400(
      await post(usJob({ items: [dtfLine({ attributes: { Colors: '7' } })] })),
      /attributes\.Colors: '7' is not one of/,
    );
    expect400(
      await post(usJob({ items: [dtfLine({ attributes: { Colors: '4', Notes: 'x' } })] })),
      /Notes: 'x' is shorter than the minimum length 2/,
    );
    expect400(
      await post(usJob({ items: [dtfLine({ attributes: { Colors: '4', Notes: 'x'.repeat(31) } })] })),
      /Notes: length 31 exceeds the maximum length 30/,
    );
    expect400(
      await post(usJob({ items: [dtfLine({ attributes: { Colors: '4', Layers: '4' } })] })),
      /Layers: 4 is outside the range 1..3/,
    );
    expect400(
      await post(usJob({ items: [dtfLine({ attributes: { Colors: '4', Layers: '1.5' } })] })),
      /Layers: '1.5' is not an integer/,
    );
    const ok = await post(
      usJob({ items: [dtfLine({ attributes: { Colors: '2', Notes: 'ok', Layers: '3', Unknown: 'ignored' } })] }),
    );
    expect(ok.status, ok.text).toBe(201);
  });

  it('an unknown, expired or inapplicable promocode', async () => {
    expect400(await post(usJob({ promocode: 'NOPE' })), /promocode: 'NOPE' is not valid: Promo code not found/);
    expect400(await post(usJob({ promocode: 'EXPIRED20' })), /expired/);
    const scr = usJob({
      promocode: 'DTFONLY15',
      items: [{ itemType: 'PriceCode', code: 'Screen Print 1 Color 3" x 3"', quantity: 50, customerReference: 'x' }],
    });
    expect400(await post(scr), /applies only to process DTF/);
  });

  it('X-Application-Name must be a valid origin code', async () => {
    expect400(
      await post(usJob(), { 'x-application-name': 'MyScript' }),
      /X-Application-Name: 'MyScript' is not a valid origin code/,
    );
    const ok = await post(usJob(), { 'x-application-name': 'HTORDER' });
    expect(ok.status).toBe(201);
    const active = await us.get('/Jobs/active');
    expect(active.body.items[0].originCode).toBe('HTORDER');
  });

  it('unknown or inactive customerUserId', async () => {
    expect400(await post(usJob({ customerUserId: 999 })), /customerUserId: 999 is not an active user/);
    expect400(await post(usJob({ customerUserId: 503 })), /customerUserId: 503/);
    // Another customer's user is unknown here.
    expect400(await post(usJob({ customerUserId: 601 })), /customerUserId: 601/);
    expect((await post(usJob({ customerUserId: 502 }))).status).toBe(201);
  });

  it('locationCodeOverride must be active and non-virtual', async () => {
    expect400(await post(usJob({ locationCodeOverride: 'DROP' })), /locationCodeOverride: 'DROP'/);
    expect400(await post(usJob({ locationCodeOverride: 'NYC' })), /locationCodeOverride: 'NYC'/);
    const ok = await post(usJob({ locationCodeOverride: 'LAX' }));
    expect(ok.body.location).toBe('Los Angeles');
  });

  it('stock lines: unknown code, variant, empty sizes', async () => {
    const stock = (over: Record<string, unknown>) =>
      usJob({
        items: [{ itemType: 'Stock', code: 'GD5000', variantCode: 'GD5000-BLK', sizeQuantities: { S: 1 }, ...over }],
      });
    expect400(await post(stock({ code: 'NOPE' })), /stock code 'NOPE' does not exist/);
    expect400(await post(stock({ variantCode: 'GD5000-RED' })), /'GD5000-RED' is not a variant/);
    expect400(await post(stock({ sizeQuantities: {} })), /sizeQuantities is required/);
    expect400(await post(stock({ code: 'OLD100', variantCode: 'OLD100-BLK' })), /archived/);
    const eq = await post(
      usJob({
        items: [{ itemType: 'Stock', code: 'PRESS-16', variantCode: 'PRESS-16-STD', sizeQuantities: { Qty: 1 } }],
      }),
    );
    expect(eq.status, eq.text).toBe(201);
    expect(eq.body.totalJobCost).toBe(899);
  });

  it('collects several messages in one answer', async () => {
    const r = await post(usJob({ promocode: 'NOPE', items: [dtfLine({ quantity: 2, customerReference: undefined })] }));
    expect(codes(r).sort()).toEqual(['BelowMinimumQuantity', 'InvalidPromoCode', 'MissingCustomerReference']);
  });
});

describe('POST /Jobs: binding and content types', () => {
  it('accepts the four JSON content types and refuses others with 415', async () => {
    for (const ct of [
      'application/json',
      'application/json-patch+json',
      'text/json',
      'application/vnd.acme+json; charset=utf-8',
    ]) {
      const r = await us.call('POST', '/Jobs', {
        body: JSON.stringify(usJob({ validateOnly: true })),
        headers: { 'content-type': ct },
      });
      expect(r.status, ct).toBe(200);
    }
    const bad = await us.call('POST', '/Jobs', {
      body: JSON.stringify(usJob()),
      headers: { 'content-type': 'text/plain' },
    });
    expect(bad.status).toBe(415);
    expect(bad.body.status).toBe(415);
  });

  it('a wrongly typed known field is a 400 with field errors; malformed JSON too', async () => {
    const r = await post(usJob({ items: [{ itemType: 'Asset', code: 'A10001', quantity: '50' }] }));
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.errors)).toEqual(['$.items[0].quantity']);
    const m = await us.call('POST', '/Jobs', { body: '{"items": [', headers: { 'content-type': 'application/json' } });
    expect(m.status).toBe(400);
    expect(m.body.errors).toBeDefined();
  });
});

describe('POST /Jobs: success', () => {
  it('validateOnly runs the checks and creates nothing', async () => {
    const r = await dry(usJob({ items: [dtfLine()] }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ isValid: true, message: VALIDATE_ONLY_MESSAGE });
    expect(await sb.admin.jobs()).toEqual([]);
    expect((await us.get('/Jobs/active')).body.totalCount).toBe(0);
    // No asset was filed either.
    expect((await us.get('/Assets/A10401')).status).toBe(404);
  });

  it('prices from the bands, + setup for new prints, + reset for reorders', async () => {
    const r = await post(
      usJob({
        items: [
          dtfLine({ quantity: 100 }),
          { itemType: 'Asset', code: 'A10001', quantity: 50 },
          dtfLine({ quantity: 10, customerReference: 'sleeve' }),
        ],
      }),
    );
    expect(r.status, r.text).toBe(201);
    // 100 × 2.40 + 25, 50 × 2.80 + 10, 10 × 3.20 + 25
    expect(r.body.totalJobCost).toBe(240 + 25 + 140 + 10 + 32 + 25);
    expect(r.body.location).toBe('Dallas');
    expect(r.body.expectingArtworkToBeUploaded).toBe(true);
    expect(r.body.jobLineDetails).toEqual([
      {
        needsArtworkToBeUploaded: true,
        customerReference: 'front-logo',
        quantity: 100,
        newAssetSku: 'A10401',
        jobLineLabelUrl: null,
      },
      {
        needsArtworkToBeUploaded: false,
        customerReference: '',
        quantity: 50,
        newAssetSku: null,
        jobLineLabelUrl: null,
      },
      {
        needsArtworkToBeUploaded: true,
        customerReference: 'sleeve',
        quantity: 10,
        newAssetSku: 'A10402',
        jobLineLabelUrl: null,
      },
    ]);
    const job = await us.get(`/Jobs/${r.body.jobNumber}`);
    expect(job.body.jobStatus).toBe('Artwork Pending');
    expect(job.body.lines.map((l: any) => l.assetSku)).toEqual(['A10401', 'A10001', 'A10402']);
  });

  it('files each new print as an asset that can be reordered at once', async () => {
    const r = await post(usJob({ items: [dtfLine({ externalArtworkUrl: 'https://cdn.example.com/f.png' })] }));
    const sku = r.body.jobLineDetails[0].newAssetSku;
    expect(r.body.jobLineDetails[0].needsArtworkToBeUploaded).toBe(false);
    const asset = await us.get(`/Assets/${sku}`);
    expect(asset.status).toBe(200);
    expect(asset.body).toMatchObject({
      assetTag: sku,
      priceCode: 'DTF Full Color 10" x 10"',
      isArchived: false,
      setup: 25,
      reset: 10,
      customerId: 1001,
    });
    const again = await post(usJob({ orderNumber: 'PO-3', items: [{ itemType: 'Asset', code: sku, quantity: 100 }] }));
    expect(again.status).toBe(201);
    expect(again.body.totalJobCost).toBe(100 * 2.4 + 10);
  });

  it('a custom-size line is priced from its DG-X / DG-Y attributes', async () => {
    const line = {
      itemType: 'PriceCode',
      code: 'DTF Custom Size',
      quantity: 10,
      customerReference: 'c',
      attributes: { 'DG-X': '5', 'DG-Y': '4', Colors: '1' },
    };
    const quote = await us.get(`/PriceCodes/${enc('DTF Custom Size')}?dgX=5&dgY=4`);
    const r = await post(usJob({ items: [line] }));
    expect(r.status, r.text).toBe(201);
    expect(r.body.totalJobCost).toBe(10 * quote.body.priceBands[0].unitPrice + quote.body.standardSetup);
    expect400(await post(usJob({ items: [{ ...line, attributes: { Colors: '1' } }] })), /DG-X is required/);
  });

  it('applies promo discounts', async () => {
    const pct = await post(usJob({ promocode: 'spring10' }));
    expect(pct.body.totalJobCost).toBe(135);
    const fixed = await post(usJob({ orderNumber: 'PO-5', promocode: 'WELCOME500' }));
    expect(fixed.body.totalJobCost).toBe(145);
  });

  it('dateDue: the requested date, or the earliest ship date when earlier', async () => {
    const later = await post(usJob({ dateDue: '2026-04-01' }));
    expect(later.body.dateDue).toBe('2026-04-01T00:00:00');
    const early = await post(usJob({ orderNumber: 'PO-6', dateDue: '2026-03-02' }));
    expect(early.body.dateDue).toBe('2026-03-05T00:00:00');
    expect400(await post(usJob({ dateDue: 'next tuesday' })), /dateDue: 'next tuesday' is not a valid date/);
  });

  it('a collection method needs no address; NZ orders use NZ data', async () => {
    const r = await post(usJob({ deliveryAddress: { deliveryMethod: 'PICKUP' } }));
    expect(r.status, r.text).toBe(201);
    const nz = new Caller(sb, 'nz-demo');
    const n = await nz.post('/Jobs', {
      orderNumber: 'NZ-1',
      dateDue: '2026-03-20',
      deliveryAddress: {
        deliveryMethod: 'NZCOUR',
        streetAddress: '1 Queen St',
        city: 'Auckland',
        postalCode: '1010',
        countryCodeISO2: 'NZ',
      },
      items: [
        {
          itemType: 'PriceCode',
          code: 'DTF Full Colour 10" x 10"',
          quantity: 10,
          customerReference: 'x',
          attributes: { Colours: '4' },
        },
      ],
    });
    expect(n.status, n.text).toBe(201);
    expect(n.body.jobLineDetails[0].newAssetSku).toMatch(/^N3/);
    // us-demo's asset does not exist for nz-demo: a documented 500.
    const cross = await nz.post('/Jobs', { ...usJob(), deliveryAddress: { deliveryMethod: 'PICKUP' } });
    expect(cross.status).toBe(500);
  });

  it('records the exact request body and headers for the admin API', async () => {
    const body = { ...usJob(), someUnknownField: { kept: true } };
    const r = await post(body, { 'x-application-name': 'HTORDER', 'idempotency-key': 'abc' });
    const jobs = await sb.admin.jobs();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      region: 'us',
      customerId: 1001,
      account: 'us-demo',
      jobNumber: r.body.jobNumber,
      orderNumber: 'PO-1',
      jobStatus: 'Received',
    });
    expect(jobs[0].request).toEqual(body);
    expect(jobs[0].headers).toMatchObject({
      'x-application-name': 'HTORDER',
      'idempotency-key': 'abc',
      'content-type': 'application/json',
    });
  });
});
