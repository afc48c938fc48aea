import type { ListEnvelope } from '../api/types.js';
import { type ApiContext, fieldErrors, type Reply } from './handler.js';

/**
 * Reads query values the way the API binds them: a malformed value is read as absent and
 * recorded as a field error, and `invalid()` answers the 400 of them all, if any.
 */
export class QueryReader {
  private readonly errors: Record<string, string[]> = {};

  constructor(private readonly ctx: Pick<ApiContext, 'query' | 'path'>) {}

  /** An integer, or with `min` 1 a positive one. */
  int(name: string, min?: 1): number | undefined {
    const raw = this.ctx.query.get(name)?.trim();
    if (!raw) return undefined;
    if (/^-?\d+$/.test(raw) && Number(raw) >= (min ?? Number.NEGATIVE_INFINITY)) return Number(raw);
    this.fail(name, `${name} must be ${min ? 'a positive integer' : 'an integer'}.`);
    return undefined;
  }

  /** `true` or `false`, in any case. */
  bool(name: string): boolean | undefined {
    const raw = this.ctx.query.get(name)?.trim().toLowerCase();
    if (!raw) return undefined;
    if (raw === 'true' || raw === 'false') return raw === 'true';
    this.fail(name, `${name} must be true or false.`);
    return undefined;
  }

  /** A comma-separated list, each value trimmed, empty ones left out. */
  list(name: string): string[] {
    return (this.ctx.query.get(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  fail(name: string, message: string): void {
    this.errors[name] = [message];
  }

  invalid(): Reply | null {
    return Object.keys(this.errors).length ? fieldErrors(this.ctx.path, this.errors) : null;
  }
}

/** Whether `text` (lower case; empty matches all) is inside one of the values, ignoring case. */
export const containsText = (text: string, values: (string | null | undefined)[]): boolean =>
  !text || values.some((v) => v?.toLowerCase().includes(text));

/** A page of an answer that is a plain array: all of it unless a page or a page size is asked for. */
export function optionalPage<T>(list: T[], page: number | undefined, pageSize: number | undefined): T[] {
  if (page === undefined && pageSize === undefined) return list;
  const size = pageSize ?? 50;
  return list.slice(((page ?? 1) - 1) * size, (page ?? 1) * size);
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
