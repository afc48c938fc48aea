import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refreshMargin } from '../../src/api/auth.js';
import {
  DEFAULT_RETRY,
  isRetrySafe,
  isRetryableStatus,
  parseRetryAfter,
  retryBackoff,
} from '../../src/api/retry-policy.js';
import { backoffDelay } from '../../src/core/backoff.js';

describe('isRetrySafe', () => {
  it('GETs are safe; POST /Jobs only with validateOnly true; PATCH and cancel never', () => {
    expect(isRetrySafe({ method: 'GET', path: '/Jobs/active' })).toBe(true);
    expect(isRetrySafe({ method: 'POST', path: '/Jobs', body: { validateOnly: true } })).toBe(true);
    expect(isRetrySafe({ method: 'POST', path: '/Jobs', body: { validateOnly: false } })).toBe(false);
    expect(isRetrySafe({ method: 'POST', path: '/Jobs', body: { validateOnly: 'true' } })).toBe(false);
    expect(isRetrySafe({ method: 'POST', path: '/Jobs', body: {} })).toBe(false);
    expect(isRetrySafe({ method: 'POST', path: '/Jobs/5/cancel', body: { validateOnly: true } })).toBe(false);
    expect(isRetrySafe({ method: 'PATCH', path: '/Jobs/5', body: {} })).toBe(false);
  });
});

describe('isRetryableStatus', () => {
  it('429, 502, 503, 504 always; 500 once; nothing else', () => {
    for (const s of [429, 502, 503, 504]) expect(isRetryableStatus(s, 5)).toBe(true);
    expect(isRetryableStatus(500, 0)).toBe(true);
    expect(isRetryableStatus(500, 1)).toBe(false);
    for (const s of [400, 401, 403, 404, 409, 501]) expect(isRetryableStatus(s, 0)).toBe(false);
  });
});

describe('backoffDelay', () => {
  it('stays within [1, min(max, base·2^(n-1))]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, r) => {
        const d = backoffDelay(attempt, retryBackoff(DEFAULT_RETRY), () => r);
        const ceiling = Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * 2 ** (attempt - 1));
        return d >= 1 && d >= Math.floor(ceiling / 2) && d <= ceiling;
      }),
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads seconds and HTTP dates, clamps to [0, max]', () => {
    expect(parseRetryAfter('1', now, 30_000)).toBe(1_000);
    expect(parseRetryAfter('120', now, 30_000)).toBe(30_000);
    expect(parseRetryAfter(new Date(now + 5_000).toUTCString(), now, 30_000)).toBe(5_000);
    expect(parseRetryAfter(new Date(now - 5_000).toUTCString(), now, 30_000)).toBe(0);
    expect(parseRetryAfter('soon', now, 30_000)).toBeNull();
    expect(parseRetryAfter(undefined, now, 30_000)).toBeNull();
  });
});

describe('refreshMargin', () => {
  it('is one minute for 10-minute tokens and proportional for short ones', () => {
    expect(refreshMargin(600)).toBe(60);
    expect(refreshMargin(3600)).toBe(60);
    expect(refreshMargin(5)).toBe(0.5);
  });
});
