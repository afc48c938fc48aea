import { describe, expect, it } from 'vitest';
import { ItemsInFileOrder } from '../../../src/manifest/csv/row-tables.js';

describe('the items in file order', () => {
  it('hand each job its items and their rows in file order, across many blocks of the store', () => {
    // Three jobs' rows interleaved unevenly over 20,000 items: the store's blocks fill and
    // follow one another, and a counting sort must still give each job its own items in order.
    const store = new ItemsInFileOrder();
    const jobs = [0, 1, 2].map(() => ({}) as Record<string, unknown>);
    for (let j = 0; j < jobs.length; j++) store.addJob(j);
    const expected: number[][] = [[], [], []];
    for (let n = 0; n < 20_000; n++) {
      const j = n % 7 === 0 ? 2 : n % 3 === 0 ? 1 : 0;
      const row = n + 2;
      expect(store.countOf(j)).toBe(expected[j].length);
      store.add({ n }, j, row);
      expected[j].push(row);
    }
    const table = store.distribute(jobs);
    expect(table.toArrays()).toEqual(expected);
    for (let j = 0; j < jobs.length; j++)
      expect((jobs[j].items as Array<{ n: number }>).map((i) => i.n + 2)).toEqual(expected[j]);
  });
});
