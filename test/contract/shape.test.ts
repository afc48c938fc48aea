import { describe, expect, it } from 'vitest';
import { compareShape } from './shape.js';

describe('compareShape', () => {
  const spec = { a: 1, b: { c: 'x', d: [{ e: true }] }, f: null };

  it('accepts the same shape with other values, and null for any type', () => {
    const got = { a: 2, b: { c: null, d: [{ e: false }, { e: true }] }, f: 'anything' };
    expect(compareShape(spec, got)).toEqual({ differences: [], unchecked: [] });
  });

  it('names the exact path of a missing key, an unknown key and a wrong type', () => {
    const got = { a: '1', b: { c: 'x', d: [{ e: true }, { E: true }] }, f: null, g: 0 };
    expect(compareShape(spec, got).differences).toEqual([
      '$.a: expected number, got string',
      '$.b.d[1].e: missing',
      '$.b.d[1].E: not in the spec',
      '$.g: not in the spec',
    ]);
  });

  it('reports an array left empty everywhere as unchecked, not as equal', () => {
    expect(compareShape(spec, { a: 1, b: { c: 'x', d: [] }, f: null })).toEqual({
      differences: [],
      unchecked: ['$.b.d'],
    });
    const items = [{ tags: ['x'] }, { tags: [] }];
    expect(compareShape([{ tags: ['a'] }], items).unchecked).toEqual([]);
    expect(compareShape([{ tags: ['a'] }], [{ tags: [] }, { tags: [] }]).unchecked).toEqual(['$[].tags']);
  });

  it('applies optional, extra and anyType by pattern path', () => {
    const got = { a: 'one', b: { d: [{ e: true, more: 1 }] }, f: null };
    const rules = { optional: ['$.b.c'], extra: ['$.b.d[]'], anyType: ['$.a'] };
    expect(compareShape(spec, got, rules).differences).toEqual([]);
    expect(compareShape(spec, got).differences).toEqual([
      '$.a: expected number, got string',
      '$.b.c: missing',
      '$.b.d[0].more: not in the spec',
    ]);
  });

  it('compares top-level arrays element by element', () => {
    expect(compareShape([{ x: 1 }], [{ x: 1 }, { y: 1 }]).differences).toEqual([
      '$[1].x: missing',
      '$[1].y: not in the spec',
    ]);
  });
});
