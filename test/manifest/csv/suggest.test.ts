import { describe, expect, it } from 'vitest';
import { suggest } from '../../../src/manifest/csv/suggest.js';
import { templateNames } from '../../../src/manifest/csv/template.js';

describe('suggest (header names)', () => {
  const names = templateNames();
  it.each([
    ['Organisation', 'organisation'],
    ['ORDERNUMBER', 'orderNumber'],
    ['order_number', 'orderNumber'],
    ['Order Number', 'orderNumber'],
    ['qty', 'quantity'],
    ['zip', 'postalCode'],
    ['quantiy', 'quantity'],
    ['cod', 'code'],
    ['countryCodeIso2', 'countryCodeISO2'],
    ['postal', 'postalCode'],
  ])('%s → %s', (input, expected) => {
    expect(suggest(input, names)).toBe(expected);
  });

  it('suggests nothing when nothing is close', () => {
    expect(suggest('foo', names)).toBeUndefined();
    expect(suggest('UNIT_PRICE', names)).toBeUndefined();
  });

  it('matches mapping source names by containment when edit distance is too far', () => {
    expect(suggest('SHIP_NAME', ['NAME', 'QTY_M'], { aliases: false })).toBe('NAME');
  });
});
