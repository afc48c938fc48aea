import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, foldAlnum, foldCase, quote, suggest } from '../../src/util/suggest.js';

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

describe('editDistance', () => {
  it.each([
    ['', '', 0], ['abc', '', 3], ['kitten', 'sitting', 3], ['untied', 'united', 1], ['colours', 'colors', 1], ['ab', 'ba', 1],
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
});
