import { describe, expect, it } from 'vitest';
import { paginateActiveJobs, paginateList } from '../../src/api/paginate.js';
import type { ActiveJobDto, ActiveJobsEnvelope, ListEnvelope } from '../../src/api/types.js';
import { caught } from '../support/api-errors.js';

function listPage(page: number, total: number, size: number): ListEnvelope<number> {
  const entities = Array.from(
    { length: Math.max(0, Math.min(size, total - (page - 1) * size)) },
    (_, i) => (page - 1) * size + i,
  );
  const totalPages = Math.ceil(total / size);
  return {
    pageSize: size,
    returnedResults: entities.length,
    totalResults: total,
    totalPages,
    currentPage: page,
    hasNext: page < totalPages,
    hasPrevious: page > 1,
    filter: null,
    nextUrl: null,
    previousUrl: null,
    entities,
  };
}

describe('paginateList', () => {
  it('yields every entity across pages, in order', async () => {
    const pages: number[] = [];
    const out: number[] = [];
    for await (const n of paginateList((p) => {
      pages.push(p);
      return Promise.resolve(listPage(p, 23, 10));
    }))
      out.push(n);
    expect(out).toEqual(Array.from({ length: 23 }, (_, i) => i));
    expect(pages).toEqual([1, 2, 3]);
  });

  it('is lazy: stopping early fetches no further page', async () => {
    const pages: number[] = [];
    for await (const n of paginateList((p) => {
      pages.push(p);
      return Promise.resolve(listPage(p, 100, 10));
    })) {
      if (n === 3) break;
    }
    expect(pages).toEqual([1]);
  });

  it('stops on an empty page even if the server claims there is more', async () => {
    const pages: number[] = [];
    const out: number[] = [];
    for await (const n of paginateList((p) => {
      pages.push(p);
      return Promise.resolve({ ...listPage(p, 5, 5), hasNext: true, entities: p === 1 ? [1] : [] });
    }))
      out.push(n);
    expect(out).toEqual([1]);
    expect(pages).toEqual([1, 2]);
  });
});

describe('paginateActiveJobs', () => {
  it('follows pageNumber/hasNextPage', async () => {
    const job = (n: number) => ({ jobNumber: n }) as ActiveJobDto;
    const env = (p: number): ActiveJobsEnvelope => ({
      items: p === 1 ? [job(1), job(2)] : [job(3)],
      totalCount: 3,
      pageNumber: p,
      pageSize: 2,
      totalPages: 2,
      hasPreviousPage: p > 1,
      hasNextPage: p < 2,
    });
    const out: number[] = [];
    for await (const j of paginateActiveJobs((p) => Promise.resolve(env(p)))) out.push(j.jobNumber);
    expect(out).toEqual([1, 2, 3]);
  });
});

describe('a paged answer that does not move stops after one repeat with an API fault naming the call', () => {
  const job = (n: number) => ({ jobNumber: n, orderNumber: 'PO-1' }) as ActiveJobDto;
  const more = { totalCount: 250, pageSize: 100, totalPages: 3, hasPreviousPage: false, hasNextPage: true };
  const cases: Array<[string, (p: number) => ActiveJobsEnvelope]> = [
    ['no pageNumber', () => ({ ...more, items: [job(1)] }) as unknown as ActiveJobsEnvelope],
    ['a pageNumber that stays at 1', () => ({ ...more, items: [job(1)], pageNumber: 1 })],
    ['a pageNumber that goes back', (p) => ({ ...more, items: [job(p)], pageNumber: p === 1 ? 1 : p - 1 })],
    [
      'a totalPages that grows, the same jobs on every page',
      (p) => ({ ...more, items: [job(1)], pageNumber: p, totalPages: p + 1 }),
    ],
  ];
  for (const [name, env] of cases) {
    it(`${name}: two pages asked for, then ApiError naming GET /Jobs/active`, async () => {
      const asked: number[] = [];
      const pages = paginateActiveJobs((p) => {
        asked.push(p);
        return Promise.resolve(env(p));
      });
      const err = await caught(
        (async () => {
          for await (const _ of pages);
        })(),
      );
      expect(err.message).toMatch(/^GET \/Jobs\/active: the answer cannot be used \(page 2 .*do not move\)$/);
      expect(asked).toEqual([1, 2]);
    });
  }

  it('a list envelope without a list of entities is an API fault naming its route, not a TypeError', async () => {
    const pages = paginateList(
      () => Promise.resolve({ entities: null as unknown as number[], hasNext: true, currentPage: 1 }),
      1,
      '/Assets',
    );
    const err = await caught(
      (async () => {
        for await (const _ of pages);
      })(),
    );
    expect(err.message).toContain('GET /Assets');
  });

  it('pages that move, even without page numbers, are all read', async () => {
    const out: number[] = [];
    const env = (p: number) => ({ ...more, items: [job(p)], hasNextPage: p < 3 }) as unknown as ActiveJobsEnvelope;
    for await (const j of paginateActiveJobs((p) => Promise.resolve(env(p)))) out.push(j.jobNumber);
    expect(out).toEqual([1, 2, 3]);
  });
});
