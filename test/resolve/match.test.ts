import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Country, DeliveryOption, State } from '../../src/api/types.js';
import { matchCountry, matchDeliveryOption, matchState } from '../../src/resolve/match.js';

const c = (name: string, iso2: string, iso3: string, hasState = false): Country => ({
  name,
  iso2,
  iso3,
  hasState,
  hasSuburb: false,
  hasPostalCode: true,
});
const countries = [
  c('United States', 'US', 'USA', true),
  c('New Zealand', 'NZ', 'NZL'),
  c('United Kingdom', 'GB', 'GBR'),
  c('Norway', 'NO', 'NOR'),
  c('Canada', 'CA', 'CAN', true),
  c('Côte d’Ivoire', 'CI', 'CIV'),
  c('Mexico', 'MX', 'MEX', true),
  c('Germany', 'DE', 'DEU'),
  c('Spain', 'ES', 'ESP'),
  c('Switzerland', 'CH', 'CHE'),
];

describe('matchCountry', () => {
  it.each([
    ['United States', 'US'],
    ['united states', 'US'],
    ['US', 'US'],
    ['us', 'US'],
    ['USA', 'US'],
    ['usa', 'US'],
    ['NO', 'NO'],
    ['no', 'NO'],
    ['NOR', 'NO'],
    ['Norway', 'NO'],
    ['  New Zealand ', 'NZ'],
    ['GBR', 'GB'],
    ['UK', 'GB'],
    ['Cote d’Ivoire', 'CI'],
    ['CAN', 'CA'],
    ['CA', 'CA'],
  ])('%s → %s', (input, iso2) => {
    expect(matchCountry(input, countries).found?.iso2).toBe(iso2);
  });

  it.each([
    ['Untied States', 'United States'],
    ['Norwya', 'Norway'],
    ['New Zeland', 'New Zealand'],
    ['Mexcio', 'Mexico'],
  ])('%s is unknown, suggests %s', (input, suggestion) => {
    expect(matchCountry(input, countries)).toEqual({ suggestion });
  });

  it.each([
    ['England', 'GB'],
    ['Scotland', 'GB'],
    ['Wales', 'GB'],
    ['Northern Ireland', 'GB'],
    ['Great Britain', 'GB'],
    ['GB-SCT', 'GB'],
    ['U.S.A.', 'US'],
    ['U.S.', 'US'],
    ['United States of America', 'US'],
    ['US-ME', 'US'],
    ['Deutschland', 'DE'],
    ['España', 'ES'],
    ['Espana', 'ES'],
    ['Schweiz', 'CH'],
    ['Suisse', 'CH'],
    ['Norge', 'NO'],
    ['Royaume-Uni', 'GB'],
    ['Vereinigtes Königreich', 'GB'],
    ['Estados Unidos', 'US'],
  ])('%s (a name people write) → %s', (input, iso2) => {
    expect(matchCountry(input, countries).found?.iso2).toBe(iso2);
  });

  it('a country ISO 3166 knows but the API list lacks is named, not guessed', () => {
    expect(matchCountry('Österreich', countries)).toEqual({ known: { iso2: 'AT', name: 'Austria' } });
    expect(matchCountry('AUT', countries)).toEqual({ known: { iso2: 'AT', name: 'Austria' } });
  });

  it('a near miss of a name in another language suggests the list name', () => {
    expect(matchCountry('Deutschlnd', countries)).toEqual({ suggestion: 'Germany' });
    expect(matchCountry('Englnd', countries)).toEqual({ suggestion: 'United Kingdom' });
  });

  it('a far-off value gets the nearest countries; an unassigned code never a guess', () => {
    const far = matchCountry('Atlantis', countries);
    expect(far).toMatchObject({ nearest: expect.any(Array) });
    expect((far as { nearest: string[] }).nearest).toHaveLength(3);
    expect(matchCountry('XX', countries)).not.toHaveProperty('found');
    expect(matchCountry('XX', countries)).not.toHaveProperty('suggestion');
    expect(matchCountry('XXX', countries)).not.toHaveProperty('suggestion');
  });
});

describe('matchState', () => {
  const states: State[] = [
    { name: 'Texas', abbreviation: 'TX' },
    { name: 'New York', abbreviation: 'NY' },
    { name: 'Québec', abbreviation: 'QC' },
  ];
  it.each([
    ['Texas', 'TX'],
    ['texas', 'TX'],
    ['TX', 'TX'],
    ['tx', 'TX'],
    ['New York', 'NY'],
    ['Quebec', 'QC'],
    ['QC', 'QC'],
  ])('%s → %s', (input, abbr) => {
    expect(matchState(input, states).found?.abbreviation).toBe(abbr);
  });

  it('suggests the closest name, else the nearest states', () => {
    expect(matchState('Texsa', states)).toEqual({ suggestion: 'Texas' });
    expect(matchState('Ohio', states)).toEqual({ nearest: ['Texas', 'New York', 'Québec'] });
  });

  it('reads an ISO 3166-2 code of the country the states are of', () => {
    const us: State[] = [
      { name: 'Maine', abbreviation: 'ME' },
      { name: 'Texas', abbreviation: 'TX' },
    ];
    expect(matchState('US-ME', us, 'US').found?.abbreviation).toBe('ME');
    expect(matchState('us-tx', us, 'US').found?.abbreviation).toBe('TX');
    expect(matchState('US ME', us, 'US').found?.abbreviation).toBe('ME');
    // Another country's code is not this country's state.
    expect(matchState('CA-ME', us, 'US').found).toBeUndefined();
    expect(matchState('US-ME', us).found).toBeUndefined();
  });
});

describe('matchDeliveryOption', () => {
  const o = (code: string, label: string, isCollection = false): DeliveryOption => ({
    code,
    label,
    isCollection,
    rank: 1,
    gangRank: 1,
    value: code,
    deliveryLabelEnabled: false,
  });
  const options = [
    o('UPSGND', 'UPS Ground'),
    o('UPS2DA', 'UPS 2nd Day Air'),
    o('FDXON', 'FedEx Overnight'),
    o('PICKUP', 'Customer Pickup', true),
  ];

  it.each([
    ['UPSGND', 'UPSGND'],
    ['upsgnd', 'UPSGND'],
    ['UPS Ground', 'UPSGND'],
    ['ups ground', 'UPSGND'],
    ['Customer Pickup', 'PICKUP'],
    ['FedEx Overnight', 'FDXON'],
  ])('%s → %s', (input, code) => {
    expect(matchDeliveryOption(input, options).found?.code).toBe(code);
  });

  it('suggests a label for a near miss', () => {
    expect(matchDeliveryOption('UPS Grnd', options)).toEqual({ suggestion: 'UPS Ground' });
    expect(matchDeliveryOption('Fedex Overnite', options)).toEqual({ suggestion: 'FedEx Overnight' });
  });

  it('names the nearest option for a shop name that is no near miss', () => {
    const nearestOf = (text: string) => (matchDeliveryOption(text, options) as { nearest?: string[] }).nearest;
    expect(nearestOf('Local Pickup')).toEqual(['Customer Pickup']);
    expect(nearestOf('Click & Collect')).toEqual(['Customer Pickup']);
    expect(nearestOf('Next Day Delivery')).toEqual(['FedEx Overnight']);
    expect(nearestOf('Flat rate')).toEqual(['UPS Ground']);
    expect(nearestOf('Standard Shipping')).toEqual(['UPS Ground']);
    expect(nearestOf('Pigeon')).toHaveLength(1);
  });

  it('an exact code wins over a label that folds to the same text', () => {
    const tricky = [o('Ground', 'Fast'), o('X1', 'ground')];
    expect(matchDeliveryOption('Ground', tricky).found?.code).toBe('Ground');
  });
});

describe('matching against the same list many times (a run resolves every job against one list)', () => {
  it('answers as a search of the list would: the first entry that folds alike, every time, per list', () => {
    const states: State[] = [
      { name: 'Texas', abbreviation: 'TX' },
      { name: 'Other Texas', abbreviation: 'tx' },
      { name: 'TEXAS', abbreviation: 'TE' },
    ] as State[];
    for (let i = 0; i < 3; i++) {
      expect(matchState('tx', states).found?.name).toBe('Texas');
      expect(matchState('texas', states).found?.abbreviation).toBe('TX');
    }
    // Another list with the same values in another order: its own first entry.
    const reversed = [...states].reverse();
    expect(matchState('tx', reversed).found?.name).toBe('Other Texas');
    expect(matchState('texas', reversed).found?.abbreviation).toBe('TE');
    const options = [
      { code: 'UPSG', label: 'UPS Ground' },
      { code: 'upsg2', label: 'ups ground' },
    ] as DeliveryOption[];
    expect(matchDeliveryOption('ups ground', options).found?.code).toBe('UPSG');
    expect(matchDeliveryOption('UPSG2', options).found?.code).toBe('upsg2');
    expect(matchCountry('united kingdom', countries).found?.iso2).toBe('GB');
    expect(matchCountry('cote d’ivoire', countries).found?.iso2).toBe('CI');
  });
});

describe('a run matches its states once per value', () => {
  const us = (): State[] =>
    [
      ['Texas', 'TX'],
      ['Maine', 'ME'],
      ['New York', 'NY'],
      ['Québec', 'QC'],
    ].map(([name, abbreviation]) => ({ name, abbreviation }) as State);

  it('reads the list once for a value asked again', () => {
    let reads = 0;
    const states = us().map((s) => {
      const { name } = s;
      return Object.defineProperty({ ...s }, 'name', {
        get() {
          reads++;
          return name;
        },
      }) as State;
    });
    expect(matchState('New  york', states, 'US').found?.abbreviation).toBe('NY');
    const first = reads;
    expect(first).toBeGreaterThan(0);
    expect(matchState('New  york', states, 'US').found?.abbreviation).toBe('NY');
    expect(reads).toBe(first);
  });

  it('answers as a fresh match does, for any values in any order, past the answers it keeps', () => {
    const spellings = ['tx', 'Texas', 'TEXAS ', 'Texsa', 'US-ME', 'us me', 'CA-ME', 'Ohio', 'quebec', 'Q', ''];
    const value = fc.oneof(fc.constantFrom(...spellings), fc.string({ maxLength: 8 }));
    const kept = us();
    fc.assert(
      fc.property(fc.array(fc.tuple(value, fc.constantFrom('US', 'CA', undefined)), { maxLength: 60 }), (asks) => {
        for (const [text, iso2] of asks) expect(matchState(text, kept, iso2)).toEqual(matchState(text, us(), iso2));
      }),
      { numRuns: 150 },
    );
    // Thousands of distinct values: the answers kept start over, and stay right.
    for (let i = 0; i < 5000; i++) matchState(`unknown ${i}`, kept, 'US');
    expect(matchState('US-ME', kept, 'US').found?.abbreviation).toBe('ME');
    expect(matchState('US-ME', kept).found).toBeUndefined();
  });
});
