import { describe, expect, it } from 'vitest';
import { editDistance, suggest } from '../../../src/manifest/schema/suggest.js';

const ADDRESS = ['deliveryMethod', 'organisation', 'countryCodeISO2', 'country', 'postalCode', 'stateCode', 'state'];
const ITEM = ['itemType', 'code', 'quantity', 'customerReference', 'sizeQuantities', 'variantCode'];

describe('suggest', () => {
  it.each([
    ['countryCodeIso2', ADDRESS, 'countryCodeISO2'],
    ['CustomerReference', ITEM, 'customerReference'],
    ['Organisation', ADDRESS, 'organisation'],
    ['organization', ADDRESS, 'organisation'],
    ['quantiy', ITEM, 'quantity'],
    ['qunatity', ITEM, 'quantity'],
    ['postcode', ADDRESS, 'postalCode'],
    ['sizes', ITEM, undefined],
    ['colour', ITEM, undefined],
    ['x', ITEM, undefined],
  ])('%s → %s', (word, candidates, expected) => {
    expect(suggest(word, candidates)).toBe(expected);
  });

  it('prefers a case-insensitive match over a closer edit', () => {
    expect(suggest('STATE', ['stat', 'state'])).toBe('state');
  });
});

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', 'abc', 0],
    ['abc', 'acb', 1],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
  ])('%s ↔ %s = %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });
});

describe('suggest: abbreviations', () => {
  it.each([
    ['customerRef', ITEM, 'customerReference'],
    ['postal', ADDRESS, 'postalCode'],
    ['size', ITEM, 'sizeQuantities'],
    ['coun', ADDRESS, undefined], // country and countryCodeISO2: ambiguous, and too far by edits
    ['cod', ITEM, 'code'],
  ])('%s → %s', (word, candidates, expected) => {
    expect(suggest(word, candidates)).toBe(expected);
  });
});
