import { describe, expect, it } from 'vitest';
import { nowIso, offsetClock, parseOffset, systemClock } from '../../src/core/clock.js';

describe('clock', () => {
  it('reads durations as people write them', () => {
    expect(parseOffset('+2d')).toBe(2 * 86_400_000);
    expect(parseOffset('36h')).toBe(36 * 3_600_000);
    expect(parseOffset('-90m')).toBe(-90 * 60_000);
    expect(parseOffset('1d12h')).toBe(36 * 3_600_000);
    expect(parseOffset('0')).toBe(0);
    expect(parseOffset('250ms')).toBe(250);
  });

  it('refuses what is not a duration, or beyond a century', () => {
    for (const bad of ['', '2', '2 days', 'd', '+-1d', '1.5d', '1y', '999999999d', `${'1d'.repeat(30)}`]) {
      expect(parseOffset(bad), bad).toBeUndefined();
    }
  });

  it('moves the real clock by an offset', () => {
    const base = { now: () => Date.UTC(2026, 10, 29, 2, 0) };
    expect(nowIso(offsetClock(parseOffset('+1d') ?? 0, base))).toBe('2026-11-30T02:00:00.000Z');
    expect(offsetClock(0)).toBe(systemClock);
  });
});
