import { describe, expect, it } from 'vitest';
import { paginateActiveJobs, paginateList } from '../../src/api/paginate.js';
import type { ActiveJobDto, ActiveJobsEnvelope, ListEnvelope } from '../../src/api/types.js';

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
