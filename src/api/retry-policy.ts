import type { Backoff } from '../core/backoff.js';

/**
 * Which calls may be retried, and how long to wait. Kept apart from the transport so
 * the rules can be read (and tested) in one place.
 *
 * Only calls that change nothing on the server are retried: GETs, and POST /Jobs with
 * `validateOnly: true` (the spec says it "runs the whole validation path and creates
 * nothing", so sending it twice is as harmless as a GET). A real POST /Jobs, PATCH and
 * cancel are never retried here: a second copy could create a second job, so their
 * failures go back to the caller with `mayHaveReachedServer`, and the exactly-once logic
 * searches before anything is sent again.
 */

export interface RetryOptions {
  /** Total attempts including the first. */
  maxAttempts: number;
  /** First backoff step; doubles each attempt (core/backoff.ts). */
  baseDelayMs: number;
  /** Upper bound of a computed backoff. */
  maxDelayMs: number;
  /** Upper bound of a server's Retry-After we honour. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
};

/** The backoff bounds of a retry policy. */
export function retryBackoff(options: RetryOptions): Backoff {
  return { baseMs: options.baseDelayMs, maxMs: options.maxDelayMs };
}

export interface CallShape {
  method: string;
  /** Path relative to the API host, without query. */
  path: string;
  body?: unknown;
}

export function isRetrySafe(call: CallShape): boolean {
  const method = call.method.toUpperCase();
  if (method === 'GET' || method === 'HEAD') return true;
  if (method === 'POST' && /^\/Jobs\/?$/i.test(call.path)) {
    const body = call.body;
    return typeof body === 'object' && body !== null && (body as { validateOnly?: unknown }).validateOnly === true;
  }
  return false;
}

/**
 * Whether a status is worth another attempt for a retry-safe call. 500 is retried once
 * only (the spec: "retry once with backoff"); `previous500s` counts the ones already seen.
 */
export function isRetryableStatus(status: number, previous500s: number): boolean {
  if (status === 429 || status === 502 || status === 503 || status === 504) return true;
  return status === 500 && previous500s === 0;
}

/**
 * Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or
 * unparseable. Capped at `maxMs` so a hostile or broken header cannot park us for hours.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number, maxMs: number): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return null;
  const text = raw.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    ms = at - nowMs;
  }
  return Math.min(maxMs, Math.max(0, ms));
}
