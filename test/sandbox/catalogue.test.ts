import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { Caller, DTF10, enc, start } from '../support/sandbox-http.js';

let sb: Sandbox;
let us: Caller;
let nz: Caller;
let other: Caller;
beforeAll(async () => {
  sb = await start();
  us = new Caller(sb, 'us-demo');
  nz = new Caller(sb, 'nz-demo');
  other = new Caller(sb, 'us-other');
});
afterAll(() => sb.close());

describe('price codes', () => {
  it('lists processes for the account', async () => {
    const r = await us.get('/PriceCodes/processes');
    expect(r.body.processes.map((p: any) => p.processCode)).toEqual(['DTF', 'SCR', 'SUB']);
  });

  it('lists price codes with bands and omits metadata (custom-size) codes', async () => {
    const r = await us.get('/PriceCodes/price-codes');
    expect(r.status).toBe(200);
    const codes = r.body.map((p: any) => p.priceCode);
    expect(codes).toContain(DTF10);
    expect(codes).not.toContain('DTF Custom Size');
    expect(r.body.every((p: any) => p.hasMetaDataAttributes === false)).toBe(true);
    const dtf = r.body.find((p: any) => p.priceCode === DTF10);
    expect(dtf.minimumQuantity).toBe(10);
    expect(dtf.priceBands).toEqual([
      { from: 10, to: 49, unitPrice: 3.2 },
      { from: 50, to: 99, unitPrice: 2.8 },
      { from: 100, to: null, unitPrice: 2.4 },
    ]);
    expect(dtf).toMatchObject({
      standardSetup: 25,
      standardReset: 10,
      processCode: 'DTF',
      sizeUnit: 'in',
      sizeWidth: 10,
      sizeHeight: 10,
    });
    expect(dtf.attributes.map((a: any) => [a.name, a.type, a.required])).toEqual([
      ['Colors', 'select', true],
      ['Notes', 'text', false],
      ['Layers', 'int', false],
    ]);
    const scr = r.body.find((p: any) => p.priceCode === 'Screen Print 1 Color 3" x 3"');
    expect(scr).toMatchObject({
      minimumQuantity: 50,
      standardSetup: 40,
      standardReset: 15,
      sampleAvailable: true,
      processCode: 'SCR',
    });
    expect(scr.samplePrice).toBeGreaterThan(0);
    expect(r.body.find((p: any) => p.priceCode === 'DTF Full Color 4" x 4"').minimumQuantity).toBe(25);
  });

  it('pages and filters the list', async () => {
    const all = (await us.get('/PriceCodes/price-codes')).body;
    const page2 = (await us.get('/PriceCodes/price-codes?page=2&pageSize=3')).body;
    expect(page2.map((p: any) => p.priceCode)).toEqual(all.slice(3, 6).map((p: any) => p.priceCode));
    const screen = (await us.get('/PriceCodes/price-codes?filter=screen')).body;
    expect(screen.length).toBe(2);
    expect((await us.get('/PriceCodes/price-codes?page=abc')).status).toBe(400);
  });

  it('prices are per account and spelt per region', async () => {
    const o = (await other.get('/PriceCodes/price-codes')).body.find((p: any) => p.priceCode === DTF10);
    expect(o.priceBands[0].unitPrice).toBe(3.52);
    const n = (await nz.get('/PriceCodes/price-codes')).body;
    const nzDtf = n.find((p: any) => p.priceCode === 'DTF Full Colour 10" x 10"');
    expect(nzDtf.attributes[0].name).toBe('Colours');
    expect(n.some((p: any) => p.priceCode === DTF10)).toBe(false);
  });

  it('gets one code by its percent-encoded path (quote and spaces)', async () => {
    const r = await us.get(`/PriceCodes/${enc(DTF10)}`);
    expect(r.status).toBe(200);
    expect(r.body.priceCode).toBe(DTF10);
    expect((await us.get(`/PriceCodes/${enc('DTF Full Color 99" x 99"')}`)).status).toBe(404);
    // A code of another region is missing here.
    expect((await us.get(`/PriceCodes/${enc('DTF Full Colour 10" x 10"')}`)).status).toBe(404);
  });

  it('prices the custom size from dgX/dgY and requires them', async () => {
    const path = `/PriceCodes/${enc('DTF Custom Size')}`;
    const r = await us.get(`${path}?dgX=10&dgY=10`);
    expect(r.status).toBe(200);
    expect(r.body.hasMetaDataAttributes).toBe(true);
    expect(r.body.priceBands.map((b: any) => b.unitPrice)).toEqual([3.2, 2.8, 2.4]);
    expect(r.body.attributes.filter((a: any) => a.isMetaDataAttribute).map((a: any) => a.name)).toEqual([
      'DG-X',
      'DG-Y',
    ]);
    const big = await us.get(`${path}?dgX=20&dgY=10`);
    expect(big.body.priceBands[0].unitPrice).toBe(6.4);
    const missing = await us.get(`${path}?dgX=10`);
    expect(missing.status).toBe(400);
    expect(missing.body.errors.dgY).toBeDefined();
    expect(missing.body.status).toBe(400);
    expect((await us.get(`${path}?dgX=abc&dgY=2`)).status).toBe(400);
    expect((await us.get(`${path}?dgX=50&dgY=2`)).status).toBe(400);
  });
});

describe('lookups and delivery', () => {
  it('countries, with defaultCountry per region', async () => {
    const r = await us.get('/Lookups/countries');
    expect(r.body.defaultCountry).toBe('US');
    const iso = r.body.countries.map((c: any) => c.iso2);
    for (const c of ['US', 'NZ', 'GB', 'AU', 'CA', 'DE', 'FR', 'IE', 'MX', 'NO', 'JP']) expect(iso).toContain(c);
    expect(r.body.countries.find((c: any) => c.iso2 === 'NO')).toMatchObject({ name: 'Norway', iso3: 'NOR' });
    expect((await nz.get('/Lookups/countries')).body.defaultCountry).toBe('NZ');
  });

  it('states: US has 51 with Texas/TX, NZ and GB have none', async () => {
    const us1 = (await us.get('/Lookups/countries/US/states')).body;
    expect(us1.states).toHaveLength(51);
    expect(us1.states).toContainEqual({ name: 'Texas', abbreviation: 'TX' });
    expect((await us.get('/Lookups/countries/AU/states')).body.states.length).toBe(8);
    expect((await us.get('/Lookups/countries/CA/states')).body.states.length).toBe(13);
    expect((await us.get('/Lookups/countries/NZ/states')).body).toEqual({ countryCode: 'NZ', states: [] });
    expect((await us.get('/Lookups/countries/GB/states')).body.states).toEqual([]);
  });

  it('job statuses, process codes by rank, size sets', async () => {
    const st = (await us.get('/Lookups/job-statuses')).body.map((s: any) => s.name);
    expect(st).toEqual([
      'Received',
      'Artwork Pending',
      'Scheduled',
      'In Production',
      'Dispatched',
      'Closed',
      'Cancelled',
      'Returned',
      'On Hold',
    ]);
    const pc = (await us.get('/Lookups/process-codes')).body;
    const ranks = pc.map((p: any) => p.rank);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(pc[0].processCode).toBe('DTF');
    expect(pc[0].metadata).toMatchObject({ setupApplies: true, printable: true });
    const ss = (await us.get('/Lookups/size-sets')).body;
    expect(ss.find((s: any) => s.name === 'Equipment').sizes).toEqual(['Qty']);
  });

  it('delivery options: codes differ from labels, one collection method', async () => {
    const r = (await us.get('/Jobs/delivery-options')).body;
    expect(r.map((o: any) => [o.code, o.label, o.isCollection])).toEqual([
      ['UPSGND', 'UPS Ground', false],
      ['UPS2DA', 'UPS 2nd Day Air', false],
      ['FDXON', 'FedEx Overnight', false],
      ['PICKUP', 'Customer Pickup', true],
    ]);
    expect(r.every((o: any) => o.value === o.code)).toBe(true);
    expect((await nz.get('/Jobs/delivery-options')).body.map((o: any) => o.code)).toEqual(['NZCOUR', 'PICKUP']);
  });

  it('earliest ship date: 3 business days from the clock, +2 for SCR, weekends skipped', async () => {
    // Clock: Monday 2026-03-02 09:00 in Dallas.
    const r = (await us.get('/Jobs/earliest-ship-date')).body;
    expect(r.shippingDateLocal).toBe('2026-03-05T17:00:00');
    expect(r.timezone).toBe('America/Chicago');
    expect(r.shippingDateUtc).toBe('2026-03-05T23:00:00Z');
    expect(r.dateExclusions).toContainEqual({ dateFrom: '2026-12-25', dateTo: '2026-12-25' });
    const scr = (await us.get('/Jobs/earliest-ship-date?processCodes=DTF,SCR')).body;
    expect(scr.shippingDateLocal).toBe('2026-03-09T17:00:00');
    await sb.admin.advanceClock(4 * 86_400_000); // Friday
    // The cached token expired with the jump; a new caller fetches a fresh one.
    const fri = (await new Caller(sb, 'us-demo').get('/Jobs/earliest-ship-date')).body;
    expect(fri.shippingDateLocal).toBe('2026-03-11T17:00:00');
    await sb.admin.reset();
  });
});
