import { describe, expect, it } from 'vitest';
import { BoundedMemo } from '../../src/core/bounded-memo.js';

describe('BoundedMemo', () => {
  it('computes an answer once per key, undefined answers too', () => {
    const memo = new BoundedMemo<string, number | undefined>(10);
    let computed = 0;
    const ask = (key: string, value: number | undefined): number | undefined =>
      memo.answer(key, () => {
        computed++;
        return value;
      });
    expect(ask('a', 1)).toBe(1);
    expect(ask('a', 2)).toBe(1);
    expect(ask('none', undefined)).toBeUndefined();
    expect(ask('none', 3)).toBeUndefined();
    expect(computed).toBe(2);
    expect(memo.has('none')).toBe(true);
  });

  it('starts over once it holds its limit, so distinct keys never grow it past the limit', () => {
    const memo = new BoundedMemo<number, number>(3);
    let computed = 0;
    const ask = (key: number): number =>
      memo.answer(key, () => {
        computed++;
        return key * 2;
      });
    for (const k of [1, 2, 3]) ask(k);
    expect(computed).toBe(3);
    expect(ask(1)).toBe(2);
    expect(computed).toBe(3);
    // The fourth key finds three kept: the table starts over with it alone.
    expect(ask(4)).toBe(8);
    expect(memo.has(1)).toBe(false);
    expect(memo.has(4)).toBe(true);
    expect(ask(1)).toBe(2);
    expect(computed).toBe(5);
  });
});
