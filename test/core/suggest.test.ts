import { describe, expect, it } from 'vitest';
import {
  didYouMean,
  didYouMeanName,
  editDistance,
  foldAlnum,
  foldCase,
  quote,
  suggest,
} from '../../src/core/suggest.js';
import { COLUMN_NAME_MATCHING, TEMPLATE_NAME_MATCHING, templateNames } from '../../src/manifest/csv/template.js';

const ADDRESS = ['deliveryMethod', 'organisation', 'countryCodeISO2', 'country', 'postalCode', 'stateCode', 'state'];
const ITEM = ['itemType', 'code', 'quantity', 'customerReference', 'sizeQuantities', 'variantCode'];

describe('suggest', () => {
  it.each([
    // [input, candidates, expected]
    ['colors', ['Colors', 'Notes', 'Layers'], 'Colors'],
    ['Colours', ['Colors', 'Notes', 'Layers'], 'Colors'],
    ['Colors', ['Colours', 'Notes'], 'Colours'],
    ['Zurich', ['Zürich', 'Bern'], 'Zürich'],
    ['Untied States', ['United Kingdom', 'United States'], 'United States'],
    ['DTF Full Color 10x10', ['DTF Full Color 4" x 4"', 'DTF Full Color 10" x 10"'], 'DTF Full Color 10" x 10"'],
    ['DTF Full Colour 10" x 10"', ['DTF Full Color 4" x 4"', 'DTF Full Color 10" x 10"'], 'DTF Full Color 10" x 10"'],
    ['countryCodeIso2', ['countryCodeISO2', 'country'], 'countryCodeISO2'],
    ['ups ground', ['UPS Ground', 'UPS 2nd Day Air'], 'UPS Ground'],
  ])('%s → %s', (input, candidates, expected) => {
    expect(suggest(input, candidates)).toBe(expected);
  });

  it.each([
    ['Banana', ['Colors', 'Notes', 'Layers']],
    ['', ['Colors']],
    ['Texas', []],
    ['zzzzzz', ['Norway', 'Mexico']],
  ])('%s: no suggestion', (input, candidates) => {
    expect(suggest(input, candidates)).toBeUndefined();
  });

  it('never suggests the input itself', () => {
    expect(suggest('Notes', ['Notes'])).toBeUndefined();
  });

  it('prefers a case match over a closer-looking typo, and keeps candidate order on ties', () => {
    expect(suggest('notes', ['Nodes', 'NOTES'])).toBe('NOTES');
    expect(suggest('ab', ['ac', 'ad'])).toBe('ac');
  });
});

describe('suggest: manifest keys', () => {
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

describe('suggest: header names', () => {
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
    expect(suggest(input, names, TEMPLATE_NAME_MATCHING)).toBe(expected);
  });

  it('suggests nothing when nothing is close', () => {
    expect(suggest('foo', names, TEMPLATE_NAME_MATCHING)).toBeUndefined();
    expect(suggest('UNIT_PRICE', names, TEMPLATE_NAME_MATCHING)).toBeUndefined();
  });

  it('matches mapping source names by containment when edit distance is too far', () => {
    expect(suggest('SHIP_NAME', ['NAME', 'QTY_M'], COLUMN_NAME_MATCHING)).toBe('NAME');
  });

  it('uses short forms and containment only when asked: values keep them off', () => {
    expect(suggest('qty', names)).toBeUndefined();
    expect(suggest('SHIP_NAME', ['NAME', 'QTY_M'])).toBeUndefined();
  });
});

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', '', 3],
    ['kitten', 'sitting', 3],
    ['untied', 'united', 1],
    ['colours', 'colors', 1],
    ['ab', 'ba', 1],
    ['abc', 'abc', 0],
    ['abc', 'acb', 1],
    ['', 'abc', 3],
  ])('%s / %s = %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });

  it('stops early past the maximum', () => {
    expect(editDistance('aaaaaaaa', 'bbbbbbbb', 2)).toBe(3);
  });
});

describe('folding and quoting', () => {
  it('folds case, accents and spacing', () => {
    expect(foldCase('  Côte  d’Ivoire ')).toBe('cote d’ivoire');
    expect(foldAlnum('DTF Full Color 10" x 10"')).toBe('dtffullcolor10x10');
  });

  it('quotes values containing double quotes with single quotes', () => {
    expect(quote('DTF Full Color 10" x 10"')).toBe(`'DTF Full Color 10" x 10"'`);
    expect(quote('UPS Ground')).toBe('"UPS Ground"');
    expect(didYouMean('colours', ['Colors'])).toBe(' (did you mean "Colors"?)');
    expect(didYouMean('xyz', ['Colors'])).toBe('');
  });

  it('phrases a name hint as a clause after a semicolon', () => {
    expect(didYouMeanName('qty', templateNames(), TEMPLATE_NAME_MATCHING)).toBe('; did you mean "quantity"?');
    expect(didYouMeanName('xyzzy', templateNames(), TEMPLATE_NAME_MATCHING)).toBe('');
  });
});
