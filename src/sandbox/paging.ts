import type { ListEnvelope } from '../api/types.js';

/** Reads a positive integer query value; `undefined` when absent, `null` when malformed. */
export function intParam(query: URLSearchParams, name: string): number | undefined | null {
  const raw = query.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  if (!/^-?\d+$/.test(raw.trim())) return null;
  return Number(raw.trim());
}

/** Reads a boolean query value (`true`/`false`, any case); `null` when malformed. */
export function boolParam(query: URLSearchParams, name: string): boolean | undefined | null {
  const raw = query.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  const v = raw.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  return null;
}

/**
 * The list envelope used by assets, users and transactions. `selfUrl` is the request's
 * absolute URL; next/previous links keep every other query parameter and change `page`.
 */
export function listEnvelope<T>(
  all: T[],
  page: number,
  pageSize: number,
  filter: string | null,
  selfUrl: URL,
): ListEnvelope<T> {
  const totalResults = all.length;
  const totalPages = Math.ceil(totalResults / pageSize);
  const entities = all.slice((page - 1) * pageSize, page * pageSize);
  const link = (p: number): string => {
    const u = new URL(selfUrl.href);
    u.searchParams.set('page', String(p));
    u.searchParams.set('pageSize', String(pageSize));
    return u.href;
  };
  const hasNext = page < totalPages;
  const hasPrevious = page > 1 && totalPages > 0;
  return {
    pageSize,
    returnedResults: entities.length,
    totalResults,
    totalPages,
    currentPage: page,
    hasNext,
    hasPrevious,
    filter,
    nextUrl: hasNext ? link(page + 1) : null,
    previousUrl: hasPrevious ? link(Math.min(page - 1, totalPages)) : null,
    entities,
  };
}

/** Case-insensitive comparison for sorting mixed values; nulls sort first. */
export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), 'en', { sensitivity: 'base', numeric: true });
}
