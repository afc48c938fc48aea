import { describe, expect, it } from 'vitest';
import { checkAttributes, checkDimensions } from '../../../src/resolve/preflight/attributes.js';
import { colorAttributes, echoSources } from '../../support/api-fixtures.js';

const CODE = 'DTF Full Color 10" x 10"';
const BASE = 'jobs[3].items[0]';
const check = (values: Record<string, string> | undefined, defs = colorAttributes()) =>
  checkAttributes(values, defs, CODE, BASE, echoSources);

describe('checkAttributes', () => {
  it('accepts a complete, valid set', () => {
    expect(check({ Colors: '4', Notes: 'front', Layers: '2' })).toEqual([]);
    expect(check({ Colors: '1' })).toEqual([]);
  });

  it.each([
    // [values, code, field, message fragment]
    [
      {},
      'attribute.required',
      'jobs[3].items[0].attributes.Colors',
      `'DTF Full Color 10" x 10"' requires the attribute "Colors" (one of: 1, 2, 3, 4)`,
    ],
    [{ Colors: '' }, 'attribute.required', 'jobs[3].items[0].attributes.Colors', 'requires the attribute "Colors"'],
    [
      { Colors: '5' },
      'attribute.not-allowed',
      'jobs[3].items[0].attributes.Colors',
      '"5" is not an allowed value of "Colors"',
    ],
    [
      { Colors: 'four' },
      'attribute.not-allowed',
      'jobs[3].items[0].attributes.Colors',
      '(did you mean "4"?); allowed: 1, 2, 3, 4',
    ],
    [
      { Colors: '4', Notes: 'x' },
      'attribute.too-short',
      'jobs[3].items[0].attributes.Notes',
      'is 1 character, shorter than its minimum 2',
    ],
    [
      { Colors: '4', Notes: 'x'.repeat(31) },
      'attribute.too-long',
      'jobs[3].items[0].attributes.Notes',
      'is 31 characters, longer than its maximum 30',
    ],
    [
      { Colors: '4', Layers: '4' },
      'attribute.out-of-range',
      'jobs[3].items[0].attributes.Layers',
      '"Layers" is 4, outside 1 to 3',
    ],
    [{ Colors: '4', Layers: '0' }, 'attribute.out-of-range', 'jobs[3].items[0].attributes.Layers', 'outside 1 to 3'],
    [
      { Colors: '4', Layers: '1.5' },
      'attribute.not-a-number',
      'jobs[3].items[0].attributes.Layers',
      'must be a whole number',
    ],
    [
      { Colors: '4', Colours: '4' },
      'attribute.unknown',
      'jobs[3].items[0].attributes.Colours',
      'has no attribute "Colours" (did you mean "Colors"?); its attributes are: Colors, Notes, Layers',
    ],
    [
      { Colors: '4', 'Ink colour': 'red' },
      'attribute.unknown',
      'jobs[3].items[0].attributes["Ink colour"]',
      'has no attribute "Ink colour"',
    ],
  ])('%j → %s', (values, code, field, fragment) => {
    const out = check(values);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      severity: 'error',
      code,
      field,
      source: { file: 'orders.yaml', columnName: field },
    });
    expect(out[0].message).toContain(fragment);
  });

  it('never truncates: a 31-character note is an error naming the limit, not a shortened value', () => {
    const values = { Colors: '4', Notes: 'x'.repeat(31) };
    const out = check(values);
    expect(out[0].message).toContain('never truncates');
    expect(values.Notes).toHaveLength(31);
  });

  it('counts characters, not UTF-16 units', () => {
    expect(check({ Colors: '4', Notes: '🎨'.repeat(30) })).toEqual([]);
  });

  it('uses the account spelling: Colours for NZ/UK', () => {
    const out = check({ Colors: '4' }, colorAttributes('Colours'));
    expect(out.map((d) => d.code).sort()).toEqual(['attribute.required', 'attribute.unknown']);
    expect(out.find((d) => d.code === 'attribute.unknown')?.message).toContain('did you mean "Colours"?');
  });

  it('checks decimals and open-ended ranges', () => {
    const defs = [{ name: 'Width', type: 'decimal', required: false, isMetaDataAttribute: false, minValue: 1 }];
    expect(checkAttributes({ Width: '2.5' }, defs, CODE, BASE, echoSources)).toEqual([]);
    expect(checkAttributes({ Width: 'wide' }, defs, CODE, BASE, echoSources)[0].code).toBe('attribute.not-a-number');
    expect(checkAttributes({ Width: '0.5' }, defs, CODE, BASE, echoSources)[0].message).toContain('outside at least 1');
  });

  it('a code without attributes refuses any', () => {
    const out = checkAttributes({ Colors: '4' }, null, CODE, BASE, echoSources);
    expect(out[0].message).toContain('it takes no attributes');
  });
});

describe('checkDimensions', () => {
  it('needs both DG-X and DG-Y', () => {
    expect(checkDimensions({ 'DG-X': '10', 'DG-Y': '12' }, 'DTF Custom Size', BASE, echoSources)).toEqual([]);
    const out = checkDimensions({ 'DG-X': '10' }, 'DTF Custom Size', BASE, echoSources);
    expect(out).toMatchObject([{ code: 'attribute.dimensions-missing', field: 'jobs[3].items[0].attributes.DG-Y' }]);
    expect(out[0].message).toContain('missing: DG-Y');
    expect(checkDimensions(undefined, 'DTF Custom Size', BASE, echoSources)[0].message).toContain(
      'missing: DG-X, DG-Y',
    );
  });
});
