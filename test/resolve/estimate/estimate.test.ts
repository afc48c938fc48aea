import { describe, expect, it } from 'vitest';
import type { PriceBand } from '../../../src/api/types.js';
import { combineWarnings, estimateJob } from '../../../src/resolve/estimate/estimate-job.js';
import { priceLine, type LinePricing } from '../../../src/resolve/estimate/line-pricing.js';
import { bandFor, money } from '../../../src/resolve/estimate/price-band.js';
import { echoSources } from '../../support/api-fixtures.js';

const DTF: PriceBand[] = [
  { from: 10, to: 49, unitPrice: 3.2 },
  { from: 50, to: 99, unitPrice: 2.8 },
  { from: 100, to: null, unitPrice: 2.4 },
];

describe('bandFor', () => {
  it.each([
    [9, undefined],
    [10, 3.2],
    [49, 3.2],
    [50, 2.8],
    [99, 2.8],
    [100, 2.4],
    [100000, 2.4],
  ])('quantity %i → %s', (q, price) => {
    expect(bandFor(DTF, q)?.unitPrice).toBe(price);
  });
  it('finds nothing in a gap or without bands', () => {
    expect(
      bandFor(
        [
          { from: 1, to: 5, unitPrice: 1 },
          { from: 10, to: null, unitPrice: 0.5 },
        ],
        7,
      ),
    ).toBeUndefined();
    expect(bandFor(null, 7)).toBeUndefined();
  });
  it('rounds money to cents', () => {
    expect(money(0.1 + 0.2)).toBe(0.3);
    expect(money(3 * 1.1)).toBe(3.3);
  });
});

describe('priceLine', () => {
  it.each<[string, LinePricing, object]>([
    [
      'new print: band × quantity + setup',
      { index: 0, quantity: 50, priceBands: DTF, setup: 25 },
      { unitPrice: 2.8, setup: 25, total: 165 },
    ],
    ['setup null = none', { index: 0, quantity: 100, priceBands: DTF, setup: null }, { unitPrice: 2.4, total: 240 }],
    [
      'reorder: band × quantity + reset',
      { index: 0, quantity: 20, priceBands: DTF, reset: 10 },
      { unitPrice: 3.2, reset: 10, total: 74 },
    ],
    [
      'sample: sample price, no setup',
      { index: 0, quantity: 2, priceBands: DTF, setup: 40, samplePrice: 5 },
      { unitPrice: 5, total: 10, note: 'sample price' },
    ],
    ['below the bands', { index: 0, quantity: 5, priceBands: DTF }, { note: 'no price band covers quantity 5' }],
    ['no bands', { index: 0, quantity: 5, priceBands: null }, { note: 'no price bands offered' }],
    [
      'known reason',
      { index: 0, quantity: 5, priceBands: DTF, unpricedReason: 'unknown price code' },
      { note: 'unknown price code' },
    ],
  ])('%s', (_, input, expected) => {
    const out = priceLine(input);
    expect(out).toMatchObject(expected);
    if (input.samplePrice !== undefined) expect(out.setup).toBeUndefined();
    if (!('total' in expected)) expect(out.total).toBeUndefined();
  });

  it('sums to cents without float noise', () => {
    expect(priceLine({ index: 0, quantity: 3, priceBands: [{ from: 1, to: null, unitPrice: 0.1 }] }).total).toBe(0.3);
  });
});

describe('estimateJob', () => {
  it('totals the lines and says when it is complete', () => {
    const e = estimateJob(
      [
        { index: 0, quantity: 50, priceBands: DTF, setup: 25 },
        { index: 1, quantity: 20, priceBands: DTF, reset: 10 },
      ],
      'USD',
    );
    expect(e).toEqual({
      lines: [
        { index: 0, quantity: 50, unitPrice: 2.8, setup: 25, total: 165 },
        { index: 1, quantity: 20, unitPrice: 3.2, reset: 10, total: 74 },
      ],
      total: 239,
      complete: true,
      currency: 'USD',
    });
  });

  it('an unpriced stock line makes it incomplete, and says why', () => {
    const e = estimateJob([
      { index: 0, quantity: 50, priceBands: DTF, setup: 25 },
      { index: 1, quantity: 30, priceBands: null, unpricedReason: 'the API offers no price for this stock item' },
    ]);
    expect(e.complete).toBe(false);
    expect(e.total).toBe(165);
    expect(e.lines[1]).toEqual({ index: 1, quantity: 30, note: 'the API offers no price for this stock item' });
    expect(estimateJob([{ index: 0, quantity: 1, unpricedReason: 'x' }]).total).toBeUndefined();
  });
});

describe('combineWarnings', () => {
  const line = (index: number, quantity: number, designKey = 'k'): LinePricing => ({
    index,
    quantity,
    priceBands: DTF,
    setup: 25,
    designKey,
  });
  const run = (lines: LinePricing[]) => combineWarnings(2, lines, estimateJob(lines).lines, echoSources, 'USD');

  it('warns with both costs when two lines of one design would be cheaper as one', () => {
    // 2 × (30 × 3.20 + 25) = 242; one line of 60 × 2.80 + 25 = 193
    const out = run([line(0, 30), line(1, 30)]);
    expect(out).toEqual([
      {
        severity: 'warning',
        code: 'estimate.combine-lines',
        field: 'jobs[2].items[1]',
        message:
          'items[0], items[1] are one design: as separate lines they cost 242.00 USD, as one line of 60 they would cost 193.00 USD',
        source: { file: 'orders.yaml', columnName: 'jobs[2].items[1]' },
      },
    ]);
  });

  it('stays quiet for different designs, single lines, samples and unpriced lines', () => {
    expect(run([line(0, 30, 'a'), line(1, 30, 'b')])).toEqual([]);
    expect(run([line(0, 30)])).toEqual([]);
    expect(run([line(0, 30), { ...line(1, 30), samplePrice: 5 }])).toEqual([]);
    expect(run([line(0, 30), { ...line(1, 30), unpricedReason: 'x' }])).toEqual([]);
    expect(run([line(0, 30), { ...line(1, 30), designKey: undefined }])).toEqual([]);
  });

  it('groups three lines into one warning', () => {
    const out = run([line(0, 20), line(1, 5, 'other'), line(2, 20), line(3, 20)]);
    expect(out).toHaveLength(1);
    expect(out[0].field).toBe('jobs[2].items[2]');
    expect(out[0].message).toContain('items[0], items[2], items[3]');
  });
});

describe('estimateJob with a promo code', () => {
  const lines: LinePricing[] = [
    { index: 0, quantity: 50, priceBands: DTF, setup: 25, processCode: 'DTF' }, // 165
    { index: 1, quantity: 100, priceBands: [{ from: 50, to: null, unitPrice: 0.7 }], setup: 40, processCode: 'SCR' }, // 110
  ];
  it.each([
    ['10% of everything', { discount: 10, isFixed: false, applicableProcessCodes: null }, 27.5, 247.5],
    ['15% of DTF lines only', { discount: 15, isFixed: false, applicableProcessCodes: ['DTF'] }, 24.75, 250.25],
    ['fixed 500 cents', { discount: 500, isFixed: true, applicableProcessCodes: null }, 5, 270],
    ['fixed, capped at the order', { discount: 100000, isFixed: true, applicableProcessCodes: null }, 275, 0],
  ])('%s', (_, promo, discount, total) => {
    const e = estimateJob(lines, 'USD', promo);
    expect(e.discount).toBe(discount);
    expect(e.total).toBe(total);
  });

  it('no promo, no discount field', () => {
    expect(estimateJob(lines)).not.toHaveProperty('discount');
    expect(estimateJob(lines).total).toBe(275);
  });
});
