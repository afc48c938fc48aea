import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { ApiError } from '../../src/api/errors.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { loadManifest } from '../../src/manifest/load-manifest.js';
import type { Manifest } from '../../src/manifest/model.js';
import { createCatalogue, type AccountCatalogue } from '../../src/resolve/catalogue.js';
import { resolveJob, type ResolvedJob } from '../../src/resolve/resolve-job.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

/**
 * Resolve, preflight and estimate through the REAL client against the REAL sandbox, from
 * YAML read by the real manifest loader (so field paths are checked against real source
 * locations). Monday 2026-03-02 09:00 in Dallas: before the cut-off, so the sandbox's
 * earliest ship date is 2026-03-05 (+2 business days with screen print: 2026-03-09).
 */
const NOW = new Date('2026-03-02T15:00:00Z');
const DTF10 = `'DTF Full Color 10" x 10"'`;
const ADDRESS =
  '{ deliveryMethod: UPS Ground, contactName: Ana, streetAddress: 1 Main St, city: Austin, state: Texas, postalCode: "78701", country: United States }';

let sandbox: Sandbox;
let dir: string;
const clients: ApiClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, now: NOW });
  dir = await mkdtemp(join(tmpdir(), 'htorder-resolve-'));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await sandbox.admin.reset();
  await sandbox.admin.clearFaults();
  await sandbox.admin.resetCalls();
});

function client(account = 'us-demo'): ApiClient {
  const c = createApiClient(sandboxConfig(sandbox, account), {
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
  });
  clients.push(c);
  return c;
}

let fileCounter = 0;
/** Writes the YAML and loads it; the manifest must pass the check stage (local rules). */
async function manifestOf(yaml: string): Promise<Manifest> {
  const file = join(dir, `m${++fileCounter}.yaml`);
  await writeFile(file, yaml);
  const loaded = await loadManifest(file);
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  expect(errors, 'the test manifest itself must pass the check stage').toEqual([]);
  return loaded.manifest as Manifest;
}

function job(items: string, extra = '', address = ADDRESS): string {
  return `version: 1
jobs:
  - orderNumber: PO-1
${extra ? `    ${extra}\n` : ''}    deliveryAddress: ${address}
    items:
${items}`;
}

async function resolveOne(yaml: string, catalogue?: AccountCatalogue): Promise<ResolvedJob> {
  const manifest = await manifestOf(yaml);
  return resolveJob(manifest, 0, catalogue ?? createCatalogue(client()));
}

async function calls(): Promise<Record<string, number>> {
  return sandbox.admin.calls();
}

const codes = (r: ResolvedJob) => r.diagnostics.map((d) => d.code);

describe('a good job', () => {
  it('becomes the exact body the API accepts, and the estimate matches the API total', async () => {
    const c = client();
    const r = await resolveOne(
      job(
        `      - { itemType: Asset, code: A10001, quantity: 50 }
      - { itemType: PriceCode, code: ${DTF10}, quantity: 60, customerReference: front, attributes: { Colors: "4", Notes: front logo } }
      - { itemType: PriceCode, code: DTF Custom Size, quantity: 30, customerReference: side, attributes: { Colors: "2", DG-X: "10", DG-Y: "12" } }
      - { itemType: Stock, code: GD5000, variantCode: GD5000-BLK, sizeQuantities: { S: 10, M: 20 } }
      - { itemType: Stock, code: PRESS-16-STD, variantCode: PRESS-16-STD, sizeQuantities: { Qty: 1 } }
`,
        'promocode: SPRING10',
      ),
      createCatalogue(c),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.candidate).toEqual({
      orderNumber: 'PO-1',
      dateDue: '2026-03-05', // omitted → the earliest ship date's local date
      promocode: 'SPRING10',
      deliveryAddress: {
        contactName: 'Ana',
        streetAddress: '1 Main St',
        city: 'Austin',
        postalCode: '78701',
        deliveryMethod: 'UPSGND',
        countryCodeISO2: 'US',
        country: 'United States',
        state: 'TX',
      },
      items: [
        { itemType: 'Asset', code: 'A10001', quantity: 50 },
        {
          itemType: 'PriceCode',
          code: 'DTF Full Color 10" x 10"',
          quantity: 60,
          customerReference: 'front',
          attributes: { Colors: '4', Notes: 'front logo' },
        },
        {
          itemType: 'PriceCode',
          code: 'DTF Custom Size',
          quantity: 30,
          customerReference: 'side',
          attributes: { Colors: '2', 'DG-X': '10', 'DG-Y': '12' },
        },
        {
          itemType: 'Stock',
          code: 'GD5000',
          variantCode: 'GD5000-BLK',
          sizeQuantities: { S: 10, M: 20 },
          quantity: 30,
        },
        // A variant code as `code` resolves to its stock code.
        { itemType: 'Stock', code: 'PRESS-16', variantCode: 'PRESS-16-STD', sizeQuantities: { Qty: 1 }, quantity: 1 },
      ],
    });
    expect(r.processCodes).toEqual([...r.processCodes].sort());
    expect(r.processCodes).toContain('DTF');
    expect(r.estimate.complete).toBe(true);
    expect(r.estimate.currency).toBe('USD');
    expect(r.estimate.lines[1]).toEqual({ index: 1, quantity: 60, unitPrice: 2.8, setup: 25, total: 193 });

    const created = await c.jobs.create(r.candidate);
    expect(created.totalJobCost).toBe(r.estimate.total);
    expect((await sandbox.admin.jobs())[0].request).toEqual({ ...r.candidate, validateOnly: false });
  });

  it('a custom size is priced with dgX/dgY', async () => {
    const r = await resolveOne(
      job(
        `      - { itemType: PriceCode, code: DTF Custom Size, quantity: 10, customerReference: a, attributes: { Colors: "1", DG-X: "5", DG-Y: "5" } }\n`,
      ),
    );
    // 25 in² × 0.032 = 0.80 a unit at the first band, + setup 25.
    expect(r.estimate.lines[0]).toMatchObject({ unitPrice: 0.8, setup: 25, total: 33 });
  });
});

describe('one call per distinct value, per account and run', () => {
  it('20 concurrent jobs with the same country, method, code and asset cost one call each', async () => {
    const jobs = Array.from(
      { length: 20 },
      (_, i) => `  - orderNumber: PO-${i}
    deliveryAddress: ${ADDRESS}
    items:
      - { itemType: PriceCode, code: ${DTF10}, quantity: 10, customerReference: r, attributes: { Colors: "1" } }
      - { itemType: Asset, code: A10001, quantity: 10 }
`,
    ).join('');
    const manifest = await manifestOf(`version: 1\njobs:\n${jobs}`);
    const catalogue = createCatalogue(client());
    const resolved = await Promise.all(manifest.jobs.map((_, i) => resolveJob(manifest, i, catalogue)));
    expect(resolved.every((r) => r.diagnostics.length === 0)).toBe(true);
    expect(await calls()).toEqual({
      'POST token': 1,
      'GET /Lookups/countries': 1,
      'GET /Lookups/countries/{countryCode}/states': 1,
      'GET /Jobs/delivery-options': 1,
      'GET /PriceCodes/{priceCode}': 1,
      'GET /Assets/{assetTag}': 1,
      'GET /Jobs/earliest-ship-date': 1,
      'GET /account': 1,
    });
  });

  it('a new run (a new catalogue) asks again: the ship date is never kept between runs', async () => {
    const c = client();
    const yaml = job(`      - { itemType: Asset, code: A10001, quantity: 10 }\n`);
    await resolveOne(yaml, createCatalogue(c));
    await resolveOne(yaml, createCatalogue(c));
    expect((await calls())['GET /Jobs/earliest-ship-date']).toBe(2);
  });

  it('asks for the ship date once per distinct set of processes', async () => {
    const manifest = await manifestOf(`version: 1
jobs:
  - orderNumber: PO-1
    deliveryAddress: ${ADDRESS}
    items:
      - { itemType: Asset, code: A10001, quantity: 10 }
  - orderNumber: PO-2
    deliveryAddress: ${ADDRESS}
    items:
      - { itemType: PriceCode, code: 'Screen Print 1 Color 3" x 3"', quantity: 50, customerReference: r }
      - { itemType: PriceCode, code: ${DTF10}, quantity: 10, customerReference: s, attributes: { Colors: "1" } }
  - orderNumber: PO-3
    deliveryAddress: ${ADDRESS}
    items:
      - { itemType: PriceCode, code: ${DTF10}, quantity: 10, customerReference: s, attributes: { Colors: "1" } }
      - { itemType: PriceCode, code: 'Screen Print 1 Color 3" x 3"', quantity: 50, customerReference: r }
`);
    const catalogue = createCatalogue(client());
    const [a, b, c] = await Promise.all([0, 1, 2].map((i) => resolveJob(manifest, i, catalogue)));
    expect(b.processCodes).toEqual(['DTF', 'SCR']);
    expect(c.processCodes).toEqual(['DTF', 'SCR']);
    expect(a.candidate.dateDue).toBe('2026-03-05');
    expect(b.candidate.dateDue).toBe('2026-03-09'); // screen print takes two days more
    expect((await calls())['GET /Jobs/earliest-ship-date']).toBe(2);
  });

  it('asks for the ship date as soon as the lines are resolved, not after the address (its states)', async () => {
    // The real catalogue, whose states lookup is held back until the ship date is asked: if
    // resolveJob waited for the address before asking, it would never finish.
    const real = createCatalogue(client());
    let shipDateAsked!: () => void;
    const asked = new Promise<void>((resolve) => {
      shipDateAsked = resolve;
    });
    const gated: AccountCatalogue = {
      ...real,
      states: async (iso2) => {
        await asked;
        return real.states(iso2);
      },
      earliestShipDate: (codes) => {
        shipDateAsked();
        return real.earliestShipDate(codes);
      },
    };
    const stuck = new Promise<never>((_, reject) => {
      setTimeout(() => reject(new Error('the ship date waited for the address')), 5_000).unref();
    });
    const r = await Promise.race([
      resolveOne(job(`      - { itemType: Asset, code: A10001, quantity: 10 }\n`), gated),
      stuck,
    ]);
    expect(r.diagnostics).toEqual([]);
    expect(r.candidate.dateDue).toBe('2026-03-05');
    expect(r.candidate.deliveryAddress).toMatchObject({ countryCodeISO2: 'US', state: 'TX' });
    const n = await calls();
    expect([n['GET /Lookups/countries/{countryCode}/states'], n['GET /Jobs/earliest-ship-date']]).toEqual([1, 1]);
  });
  it('never shares between accounts: NZ spells Colours and prices its own code', async () => {
    const nz = createCatalogue(client('nz-demo'));
    const r = await resolveOne(
      job(
        `      - { itemType: PriceCode, code: 'DTF Full Colour 10" x 10"', quantity: 10, customerReference: r, attributes: { Colors: "1" } }\n`,
        '',
        '{ deliveryMethod: NZ Courier, streetAddress: 1 Queen St, city: Christchurch, state: Canterbury, postalCode: "8011", country: NZL }',
      ),
      nz,
    );
    expect(r.candidate.deliveryAddress).toMatchObject({
      deliveryMethod: 'NZCOUR',
      countryCodeISO2: 'NZ',
      country: 'New Zealand',
      state: 'Canterbury',
    });
    expect(codes(r).sort()).toEqual(['attribute.required', 'attribute.unknown']);
    expect(r.diagnostics.find((d) => d.code === 'attribute.unknown')?.message).toContain('(did you mean "Colours"?)');
    // NZ has no states: the state passed through without a states call.
    expect((await calls())['GET /Lookups/countries/{countryCode}/states']).toBeUndefined();
  });
});

describe('addresses', () => {
  it.each([
    ['United States', 'US'],
    ['USA', 'US'],
    ['us', 'US'],
    ['NO', 'NO'],
    ['Norway', 'NO'],
    ['GBR', 'GB'],
    ['UK', 'GB'],
  ])('country %s → %s (a three-letter code never reaches the API)', async (written, iso2) => {
    const state = iso2 === 'US' ? ', state: tx' : '';
    const r = await resolveOne(
      job(
        `      - { itemType: Asset, code: A10001, quantity: 10 }\n`,
        '',
        `{ deliveryMethod: UPSGND, streetAddress: 1 Main St, city: X, postalCode: "1234", country: "${written}"${state} }`,
      ),
    );
    expect(r.candidate.deliveryAddress.countryCodeISO2).toBe(iso2);
    expect(codes(r)).toEqual([]);
  });

  it("unknown country, state and method get the account list's spelling, located in the YAML", async () => {
    const r = await resolveOne(
      job(
        `      - { itemType: Asset, code: A10001, quantity: 10 }\n`,
        '',
        '{ deliveryMethod: UPS Grnd, streetAddress: 1 Main St, city: Austin, state: Texsa, country: Untied States }',
      ),
    );
    expect(r.diagnostics.map((d) => [d.code, d.field, d.message])).toEqual([
      [
        'deliveryMethod.unknown',
        'jobs[0].deliveryAddress.deliveryMethod',
        expect.stringContaining(
          '"UPS Grnd" is not a delivery method of this account (did you mean "UPS Ground"?); available: UPSGND (UPS Ground)',
        ),
      ],
      [
        'country.unknown',
        'jobs[0].deliveryAddress.country',
        '"Untied States" is not a country known to the API (did you mean "United States"?)',
      ],
    ]);
    expect(r.diagnostics[1].source).toMatchObject({ line: 4 });
    // Unresolved: the manifest's country text is not sent.
    expect(r.candidate.deliveryAddress.country).toBeUndefined();
    expect(r.candidate.deliveryAddress.countryCodeISO2).toBeUndefined();

    const s = await resolveOne(
      job(
        `      - { itemType: Asset, code: A10001, quantity: 10 }\n`,
        '',
        '{ deliveryMethod: UPSGND, streetAddress: 1 Main St, city: Austin, postalCode: "78701", state: Texsa, country: US }',
      ),
    );
    expect(s.diagnostics.map((d) => d.message)).toEqual([
      '"Texsa" is not a state of United States (did you mean "Texas"?)',
    ]);
  });

  it('countries and states by the names people write: England, U.S.A., Deutschland, ISO 3166-2 states', async () => {
    const asset = `      - { itemType: Asset, code: A10001, quantity: 10 }\n`;
    const at = (country: string, extra = '') =>
      `{ deliveryMethod: UPS Ground, streetAddress: 1 Main St, city: Town, postalCode: "12345", country: "${country}"${extra} }`;
    for (const [written, iso2] of [
      ['England', 'GB'],
      ['Scotland', 'GB'],
      ['Great Britain', 'GB'],
      ['Deutschland', 'DE'],
      ['España', 'ES'],
      ['GBR', 'GB'],
    ]) {
      const r = await resolveOne(job(asset, '', at(written)));
      expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(r.candidate.deliveryAddress.countryCodeISO2).toBe(iso2);
    }
    const us = await resolveOne(job(asset, '', at('U.S.A.', ', state: US-ME')));
    expect(us.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(us.candidate.deliveryAddress).toMatchObject({ countryCodeISO2: 'US', state: 'ME' });
    const other = await resolveOne(job(asset, '', at('USA', ', state: CA-ON')));
    expect(other.diagnostics.map((d) => d.message)).toEqual([
      expect.stringMatching(/^"CA-ON" is not a state of United States \(nearest: /),
    ]);
    const austria = await resolveOne(job(asset, '', at('Österreich')));
    expect(austria.diagnostics.map((d) => d.message)).toEqual([
      '"Österreich" is Austria (AT), which is not among the API\'s countries',
    ]);
    const nowhere = await resolveOne(job(asset, '', at('Atlantis')));
    expect(nowhere.diagnostics.map((d) => d.message)).toEqual([
      expect.stringMatching(/^"Atlantis" is not a country known to the API \(nearest: "[^"]+", "[^"]+", "[^"]+"\)$/),
    ]);
  });

  it("an unknown delivery method suggests the account's nearest option for the deliveryMethods table", async () => {
    const r = await resolveOne(
      job(
        `      - { itemType: Asset, code: A10001, quantity: 10 }\n`,
        '',
        '{ deliveryMethod: Local Pickup, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701", country: US }',
      ),
    );
    expect(r.diagnostics.map((d) => d.message)).toEqual([
      expect.stringMatching(
        /^"Local Pickup" is not a delivery method of this account \(nearest: "Customer Pickup"\); available: .*deliveryMethods: \{ "Local Pickup": Customer Pickup \}$/,
      ),
    ]);
  });

  it('a collection method needs no address and looks none up', async () => {
    const r = await resolveOne(
      job(
        `      - { itemType: Asset, code: A10001, quantity: 10 }\n`,
        '',
        '{ deliveryMethod: Customer Pickup, contactName: Ana }',
      ),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.candidate.deliveryAddress).toEqual({ contactName: 'Ana', deliveryMethod: 'PICKUP' });
    expect((await calls())['GET /Lookups/countries']).toBeUndefined();
    await expect(client().jobs.validate(r.candidate)).resolves.toMatchObject({ status: 200 });
  });

  it("a courier address must have what the country's addresses have (else the API cannot route it)", async () => {
    const us = await resolveOne(
      job(
        `      - { itemType: Asset, code: A10001, quantity: 10 }\n`,
        '',
        '{ deliveryMethod: UPSGND, contactName: Ana, country: US }',
      ),
    );
    expect(us.diagnostics.map((d) => [d.code, d.field, d.message])).toEqual([
      [
        'address.incomplete',
        'jobs[0].deliveryAddress.streetAddress',
        'a courier delivery (UPSGND) to United States needs a streetAddress',
      ],
      [
        'address.incomplete',
        'jobs[0].deliveryAddress.city',
        'a courier delivery (UPSGND) to United States needs a city',
      ],
      [
        'address.incomplete',
        'jobs[0].deliveryAddress.postalCode',
        'a courier delivery (UPSGND) to United States needs a postalCode',
      ],
      [
        'address.incomplete',
        'jobs[0].deliveryAddress.state',
        'a courier delivery (UPSGND) to United States needs a state',
      ],
    ]);
    // New Zealand addresses have no state.
    const nz = await resolveOne(
      job(
        `      - { itemType: Asset, code: N30001, quantity: 10 }\n`,
        '',
        '{ deliveryMethod: NZCOUR, streetAddress: 1 Queen St, city: Auckland, postalCode: "1010", country: NZ }',
      ),
      createCatalogue(client('nz-demo')),
    );
    expect(codes(nz).filter((c) => c.startsWith('address.'))).toEqual([]);
  });

  it('a courier method without a country is an error', async () => {
    const r = await resolveOne(
      job(
        `      - { itemType: Asset, code: A10001, quantity: 10 }\n`,
        '',
        '{ deliveryMethod: UPSGND, streetAddress: 1 Main St, city: Austin }',
      ),
    );
    expect(r.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['country.missing', 'delivery method "UPSGND" ships by courier: the address needs a country'],
    ]);
  });
});

describe('lines', () => {
  it('an unknown price code fetches the list once (for two unknown codes) and suggests the account spelling', async () => {
    const r = await resolveOne(
      job(`      - { itemType: PriceCode, code: 'DTF Full Colour 10" x 10"', quantity: 10, customerReference: a, attributes: { Colors: "1" } }
      - { itemType: PriceCode, code: 'DTF Full Color 4x4', quantity: 25, customerReference: b, attributes: { Colors: "1" } }
`),
    );
    expect(r.diagnostics.map((d) => d.message)).toEqual([
      `'DTF Full Colour 10" x 10"' is not a price code of this account (did you mean 'DTF Full Color 10" x 10"'?)`,
      `"DTF Full Color 4x4" is not a price code of this account (did you mean 'DTF Full Color 4" x 4"'?)`,
    ]);
    expect(r.diagnostics[0]).toMatchObject({
      code: 'priceCode.unknown',
      field: 'jobs[0].items[0].code',
      source: { line: 6 },
    });
    expect((await calls())['GET /PriceCodes/price-codes']).toBe(1);
    expect(r.estimate.complete).toBe(false);
    expect(r.estimate.lines[0].note).toBe('unknown price code');
  });

  it('quantity, samples, attributes', async () => {
    const r = await resolveOne(
      job(`      - { itemType: PriceCode, code: ${DTF10}, quantity: 5, customerReference: a, attributes: { Colours: "4" } }
      - { itemType: PriceCode, code: ${DTF10}, quantity: 10, customerReference: b, attributes: { Colors: "5", Notes: "${'x'.repeat(31)}", Layers: "9" } }
      - { itemType: PriceCode, code: ${DTF10}, quantity: 1, isSample: true, customerReference: c, attributes: { Colors: "1" } }
      - { itemType: PriceCode, code: 'Screen Print 1 Color 3" x 3"', quantity: 2, isSample: true, customerReference: d }
`),
    );
    expect(r.diagnostics.map((d) => [d.code, d.field])).toEqual([
      ['quantity.below-minimum', 'jobs[0].items[0].quantity'],
      ['attribute.unknown', 'jobs[0].items[0].attributes.Colours'],
      ['attribute.required', 'jobs[0].items[0].attributes.Colors'],
      ['attribute.not-allowed', 'jobs[0].items[1].attributes.Colors'],
      ['attribute.too-long', 'jobs[0].items[1].attributes.Notes'],
      ['attribute.out-of-range', 'jobs[0].items[1].attributes.Layers'],
      ['sample.unavailable', 'jobs[0].items[2].isSample'],
    ]);
    expect(r.diagnostics[0].message).toBe(`5 is below the minimum quantity 10 of 'DTF Full Color 10" x 10"'`);
    expect(r.diagnostics[0].source).toMatchObject({ line: 6 });
    // The screen-print sample is fine and priced at the sample price, without setup.
    expect(r.estimate.lines[3]).toEqual({ index: 3, quantity: 2, unitPrice: 5, total: 10, note: 'sample price' });
    // Whatever we flagged, the API flags too (the dry run agrees with the preflight).
    await expect(client().jobs.validate(r.candidate)).rejects.toMatchObject({ status: 400 });
  });

  it("a custom size without dimensions is refused with the API's reason and a hint", async () => {
    const r = await resolveOne(
      job(
        `      - { itemType: PriceCode, code: DTF Custom Size, quantity: 10, customerReference: a, attributes: { Colors: "1" } }\n`,
      ),
    );
    expect(codes(r)).toEqual(['api.lookup-refused']);
    expect(r.diagnostics[0].message).toMatch(
      /^the API refused to price "DTF Custom Size": dgX is required.*attributes DG-X and DG-Y\)$/,
    );
  });

  it('assets: unknown, archived, below the first band', async () => {
    const r = await resolveOne(
      job(`      - { itemType: Asset, code: a10001, quantity: 10 }
      - { itemType: Asset, code: A10002, quantity: 30 }
      - { itemType: Asset, code: A10001, quantity: 3 }
`),
    );
    expect(r.diagnostics.map((d) => [d.code, d.field, d.message])).toEqual([
      ['asset.unknown', 'jobs[0].items[0].code', 'no asset "a10001" on this account (did you mean "A10001"?)'],
      ['asset.archived', 'jobs[0].items[1].code', 'asset A10002 is archived and cannot be reordered'],
      ['quantity.below-minimum', 'jobs[0].items[2].quantity', '3 is below the minimum quantity 10 of asset A10001'],
    ]);
  });

  it("another account's asset is unknown here (isolation)", async () => {
    const r = await resolveOne(
      job(`      - { itemType: Asset, code: A10001, quantity: 10 }\n`),
      createCatalogue(client('us-other')),
    );
    expect(codes(r)).toEqual(['asset.unknown']);
  });

  it('stock: unknown item, unknown variant, unknown size', async () => {
    const r = await resolveOne(
      job(`      - { itemType: Stock, code: NOPE1, variantCode: NOPE1-X, sizeQuantities: { S: 1 } }
      - { itemType: Stock, code: GD5000, variantCode: GD5000-BLU, sizeQuantities: { S: 1 } }
      - { itemType: Stock, code: GD5000, variantCode: GD5000-WHT, sizeQuantities: { S: 1, xl: 2 } }
`),
    );
    expect(r.diagnostics.map((d) => [d.code, d.field])).toEqual([
      ['stock.unknown', 'jobs[0].items[0].code'],
      ['stock.variant-unknown', 'jobs[0].items[1].variantCode'],
      ['stock.size-unknown', 'jobs[0].items[2].sizeQuantities.xl'],
    ]);
    expect(r.diagnostics[2].message).toContain('(did you mean "XL"?)');
    expect((await calls())['GET /Stock/{code}']).toBe(2); // GD5000 once for two lines
  });
});

describe('job-level', () => {
  it.each([
    ['EXPIRED20', 'DTF', true],
    ['DTFONLY15', 'SCR', true],
    ['DTFONLY15', 'DTF', false],
    ['WELCOME500', 'SCR', false],
  ])("promo %s on a %s job: invalid=%s, with the API's message", async (promo, process, invalid) => {
    const line =
      process === 'DTF'
        ? `      - { itemType: PriceCode, code: ${DTF10}, quantity: 10, customerReference: a, attributes: { Colors: "1" } }\n`
        : `      - { itemType: PriceCode, code: 'Screen Print 1 Color 3" x 3"', quantity: 50, customerReference: a }\n`;
    const r = await resolveOne(job(line, `promocode: ${promo}`));
    expect(codes(r)).toEqual(invalid ? ['promocode.invalid'] : []);
    if (invalid) {
      expect(r.diagnostics[0].field).toBe('jobs[0].promocode');
      expect(r.diagnostics[0].message).toMatch(new RegExp(`^promo code "${promo}" is not valid: .+`));
    } else {
      expect(r.estimate.discount).toBeGreaterThan(0);
    }
  });

  it('a dateDue before the earliest ship date is a warning, and is sent as written', async () => {
    const r = await resolveOne(job(`      - { itemType: Asset, code: A10001, quantity: 10 }\n`, 'dateDue: 2026-03-03'));
    expect(r.diagnostics).toMatchObject([
      { severity: 'warning', code: 'dateDue.before-earliest', field: 'jobs[0].dateDue', source: { line: 4 } },
    ]);
    expect(r.candidate.dateDue).toBe('2026-03-03');
  });

  it('two lines of one design: a warning with both costs', async () => {
    const r = await resolveOne(
      job(`      - { itemType: PriceCode, code: ${DTF10}, quantity: 30, customerReference: a, attributes: { Colors: "4" } }
      - { itemType: PriceCode, code: ${DTF10}, quantity: 30, customerReference: b, attributes: { Colors: "4" } }
`),
    );
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.message])).toEqual([
      [
        'warning',
        'estimate.combine-lines',
        'items[0], items[1] are one design: as separate lines they cost 242.00 USD, as one line of 60 they would cost 193.00 USD',
      ],
    ]);
  });

  it('does not keep manifest-only keys (cancel)', async () => {
    const r = await resolveOne(job(`      - { itemType: Asset, code: A10001, quantity: 10 }\n`, 'cancel: false'));
    expect(r.candidate).not.toHaveProperty('cancel');
  });
});

describe("failures that are not the manifest's", () => {
  it('an API outage rejects (exit 3 territory) instead of becoming a diagnostic', async () => {
    await sandbox.admin.setFaults([
      { route: 'GET /Lookups/countries', kind: 'status', status: 503, retryAfterSeconds: 0 },
    ]);
    const err = await resolveOne(job(`      - { itemType: Asset, code: A10001, quantity: 10 }\n`)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(503);
  });
});
