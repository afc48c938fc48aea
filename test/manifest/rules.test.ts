import { describe, expect, it } from 'vitest';
import type { Manifest, ManifestItem, ManifestJob } from '../../src/manifest/model.js';
import { artworkUrls, urlProblem } from '../../src/manifest/rules/artwork-url.js';
import { dueDate, isCalendarDate } from '../../src/manifest/rules/due-date.js';
import { runLocalRules } from '../../src/manifest/rules/index.js';
import {
  countryCodeShape,
  deliveryMethodRequired,
  orderGroupSequence,
  orderNumberShape,
  sizeQuantitiesAgree,
  uniqueOrderNumber,
} from '../../src/manifest/rules/job-fields.js';

const asset: ManifestItem = { itemType: 'Asset', code: 'A10001', quantity: 5 };
const job = (over: Partial<ManifestJob> = {}): ManifestJob => ({
  orderNumber: 'PO-1',
  deliveryAddress: { deliveryMethod: 'UPSGND' },
  items: [asset],
  ...over,
});
const codes = (findings: readonly { code: string }[]) => findings.map((f) => f.code);

describe('uniqueOrderNumber', () => {
  const manifest = (numbers: string[]): Manifest => ({
    file: 'm.yaml',
    format: 'yaml',
    sha256: '',
    jobs: numbers.map((orderNumber) => job({ orderNumber })),
    sources: { locate: (p) => ({ file: 'm.yaml', line: 10 + Number(/jobs\[(\d+)\]/.exec(p)![1]), column: 18 }) },
  });

  it('names both locations', () => {
    expect(uniqueOrderNumber(manifest(['A', 'B', 'A']))).toEqual([
      {
        code: 'order-number.duplicate',
        field: 'jobs[2].orderNumber',
        message:
          'orderNumber "A" is used twice: jobs[0] at line 10, column 18 and jobs[2] at line 12, column 18; each job needs its own',
      },
    ]);
  });

  it.each([[['A', 'B']], [['A', 'a']], [[]]])('%j has no duplicates', (numbers) => {
    expect(uniqueOrderNumber(manifest(numbers))).toEqual([]);
  });

  it('uses CSV rows when that is what the source map gives', () => {
    const m = manifest(['A', 'A']);
    m.sources = {
      locate: (p) => ({ file: 'm.csv', row: 2 + Number(/jobs\[(\d+)\]/.exec(p)![1]) * 5, columnName: 'orderNumber' }),
    };
    expect(uniqueOrderNumber(m)[0].message).toBe(
      'orderNumber "A" is used twice: jobs[0] at row 2 and jobs[1] at row 7; each job needs its own',
    );
  });
});

describe('per-job rules', () => {
  it.each([
    ['orderNumberShape', orderNumberShape, job(), []],
    ['orderNumberShape', orderNumberShape, job({ orderNumber: ' PO-1' }), ['order-number.whitespace']],
    ['orderNumberShape', orderNumberShape, job({ orderNumber: 'PO\t1' }), ['order-number.control-character']],
    ['orderNumberShape', orderNumberShape, job({ orderNumber: 'PO-1\u0085' }), ['order-number.control-character']],
    ['orderNumberShape', orderNumberShape, job({ orderNumber: 'PO-1\u200b' }), ['order-number.invisible-character']],
    ['orderNumberShape', orderNumberShape, job({ orderNumber: 'Cafe\u0301' }), ['order-number.not-nfc']],
    ['orderNumberShape', orderNumberShape, job({ orderNumber: 'Caf\u00e9 1' }), []],
    [
      'sizeQuantitiesAgree',
      sizeQuantitiesAgree,
      job({ items: [{ itemType: 'Stock', code: 'S', sizeQuantities: { M: 1, L: 2 }, quantity: 3 }] }),
      [],
    ],
    [
      'sizeQuantitiesAgree',
      sizeQuantitiesAgree,
      job({ items: [{ itemType: 'Stock', code: 'S', sizeQuantities: { M: 1, L: 2 }, quantity: 4 }] }),
      ['size-quantities.sum-mismatch'],
    ],
    [
      'sizeQuantitiesAgree',
      sizeQuantitiesAgree,
      job({ items: [{ itemType: 'Stock', code: 'S', sizeQuantities: {} }] }),
      ['size-quantities.all-zero'],
    ],
    ['deliveryMethodRequired', deliveryMethodRequired, job({ deliveryAddress: {} }), ['delivery-method.missing']],
    [
      'deliveryMethodRequired',
      deliveryMethodRequired,
      job({ deliveryAddress: { deliveryMethod: '  ' } }),
      ['delivery-method.missing'],
    ],
    ['deliveryMethodRequired', deliveryMethodRequired, job(), []],
    [
      'countryCodeShape',
      countryCodeShape,
      job({ deliveryAddress: { deliveryMethod: 'X', countryCodeISO2: 'US' } }),
      [],
    ],
    [
      'countryCodeShape',
      countryCodeShape,
      job({ deliveryAddress: { deliveryMethod: 'X', countryCodeISO2: 'USA' } }),
      ['country-code.iso3'],
    ],
    [
      'countryCodeShape',
      countryCodeShape,
      job({ deliveryAddress: { deliveryMethod: 'X', countryCodeISO2: 'U5' } }),
      ['country-code.shape'],
    ],
    [
      'countryCodeShape',
      countryCodeShape,
      job({ deliveryAddress: { deliveryMethod: 'X', countryCodeISO2: 'United States' } }),
      ['country-code.shape'],
    ],
    ['dueDate', dueDate, job({ dateDue: '2026-12-04' }), []],
    ['dueDate', dueDate, job({ dateDue: '2026-02-29' }), ['date.invalid']],
    ['dueDate', dueDate, job({ dateDue: '04/12/2026' }), ['date.invalid']],
    ['dueDate', dueDate, job({ mustDate: true }), ['date.must-without-date']],
    ['orderGroupSequence', orderGroupSequence, job({ orderGroupSequence: 2 }), ['order-group.sequence-without-group']],
    ['orderGroupSequence', orderGroupSequence, job({ orderGroupSequence: 2, orderGroup: 'G' }), []],
  ] as const)('%s #%#', (_name, rule, j, expected) => {
    expect(codes(rule(j, 0))).toEqual(expected);
  });

  it('points each finding at its field', () => {
    expect(
      sizeQuantitiesAgree(
        job({ items: [{ itemType: 'Stock', code: 'S', sizeQuantities: { M: 1 }, quantity: 4 }] }),
        2,
      )[0],
    ).toMatchObject({
      field: 'jobs[2].items[0].quantity',
      message: 'quantity 4 does not match the sum of sizeQuantities (1); give one or make them agree',
    });
  });

  it('suggests `country:` for a three-letter countryCodeISO2', () => {
    const [f] = countryCodeShape(job({ deliveryAddress: { deliveryMethod: 'X', countryCodeISO2: 'NZL' } }), 0);
    expect(f.message).toBe(
      '"NZL" is a three-letter code; countryCodeISO2 takes exactly two letters. Write `country: NZL` instead (it accepts a name, ISO2 or ISO3)',
    );
  });

  it('marks mustDate without dateDue as a warning only', () => {
    expect(dueDate(job({ mustDate: true }), 0)[0].severity).toBe('warning');
  });

  it('judges every job: a date it remembers as valid stays valid, a bad one is reported each time it comes', () => {
    // Valid dates are remembered across jobs (and calls); nothing else is.
    for (let j = 0; j < 3; j++) {
      expect(dueDate(job({ dateDue: '2027-03-01' }), j)).toEqual([]);
      expect(codes(dueDate(job({ dateDue: '2027-02-29' }), j))).toEqual(['date.invalid']);
      expect(codes(dueDate(job({ dateDue: '46363' }), j))).toEqual(['date.excel-serial']);
      expect(dueDate(job({ dateDue: '2027-02-29' }), j)[0].field).toBe(`jobs[${j}].dateDue`);
    }
  });
});

describe('isCalendarDate', () => {
  it.each([
    ['2026-12-04', true],
    ['2028-02-29', true],
    ['2026-02-29', false],
    ['2026-13-01', false],
    ['2026-04-31', false],
    ['2026-1-4', false],
    ['2026-12-04T00:00:00Z', false],
    ['', false],
  ])('%s → %s', (text, ok) => {
    expect(isCalendarDate(text)).toBe(ok);
  });
});

describe('artwork URLs', () => {
  it.each([
    ['https://cdn.example.com/a.png', undefined],
    ['https://cdn.example.com/a.png?X-Amz-Signature=abc', undefined],
    ['http://127.0.0.1:8080/a.png', undefined],
    ['http://localhost/a.png', undefined],
    ['http://[::1]/a.png', undefined],
    ['http://cdn.example.com/a.png', 'url.not-https'],
    ['ftp://cdn.example.com/a.png', 'url.not-https'],
    ['cdn.example.com/a.png', 'url.invalid'],
    ['https://user:pw@cdn.example.com/a.png', 'url.credentials'],
  ])('%s → %s', (url, code) => {
    expect(urlProblem(url)?.code).toBe(code);
  });

  it('never echoes a query string or credentials', () => {
    const m1 = urlProblem('http://cdn.example.com/a.png?sig=SECRET-TOKEN')!.message;
    const m2 = urlProblem('https://bob:SECRET-PW@cdn.example.com/a.png?sig=SECRET-TOKEN')!.message;
    expect(m1).toBe('must be an https URL the service can fetch, got http://cdn.example.com/a.png');
    expect(m2).not.toMatch(/SECRET/);
  });

  it('expects every PriceCode line of a job to have artwork once one has', () => {
    const pc = (url?: string): ManifestItem => ({
      itemType: 'PriceCode',
      code: 'X',
      quantity: 10,
      customerReference: 'r',
      ...(url ? { externalArtworkUrl: url } : {}),
    });
    expect(artworkUrls(job({ items: [pc('https://x/a.png'), pc(), asset] }), 0)).toEqual([
      {
        code: 'artwork.missing',
        field: 'jobs[0].items[1]',
        message:
          'has no artwork or externalArtworkUrl but items[0] of this job does; the API expects every PriceCode line to supply one when any does',
      },
    ]);
    expect(artworkUrls(job({ items: [pc(), pc()] }), 0)).toEqual([]);
  });
});

describe('runLocalRules', () => {
  it('skips per-job rules for jobs the schema already faulted, but still checks uniqueness', () => {
    const m: Manifest = {
      file: 'm.yaml',
      format: 'yaml',
      sha256: '',
      jobs: [job({ deliveryAddress: {} }), job({ deliveryAddress: {} })],
      sources: { locate: () => ({ file: 'm.yaml', line: 1, column: 1 }) },
    };
    expect(runLocalRules(m).map((d) => d.code)).toEqual([
      'order-number.duplicate',
      'delivery-method.missing',
      'delivery-method.missing',
    ]);
    expect(runLocalRules(m, new Set([0, 1])).map((d) => d.code)).toEqual(['order-number.duplicate']);
    expect(runLocalRules(m)[0]).toMatchObject({ severity: 'error', source: { file: 'm.yaml', line: 1, column: 1 } });
  });
});
