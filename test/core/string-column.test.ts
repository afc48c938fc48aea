import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StringColumn } from '../../src/core/string-column.js';

describe('a column of strings', () => {
  it('reads back every string as it was set, whatever its characters, set in any order and again', () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.constant(''));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(40), text), { minLength: 1, maxLength: 200 }), (sets) => {
        const column = new StringColumn(41);
        const want = new Map<number, string>();
        for (const [i, t] of sets) {
          column.set(i, t);
          want.set(i, t);
        }
        for (let i = 0; i < 41; i++) expect(column.get(i)).toBe(want.get(i));
      }),
      { numRuns: 300 },
    );
  });

  it('grows past its first buffer, and refuses an index it does not have', () => {
    const n = 3_000;
    const column = new StringColumn(n);
    const name = (i: number) => `${i % 2 ? 'Ä' : '订单'}-${i}-${'x'.repeat(i % 997)}`;
    for (let i = n - 1; i >= 0; i--) column.set(i, name(i));
    expect(Array.from({ length: n }, (_, i) => column.get(i))).toEqual(Array.from({ length: n }, (_, i) => name(i)));
    expect(() => column.set(n, 'x')).toThrow(RangeError);
    expect(() => column.set(-1, 'x')).toThrow(RangeError);
    expect(column.get(n)).toBeUndefined();
  });
});
