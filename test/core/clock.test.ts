import { describe, expect, it } from 'vitest';
import { isoInstantMs, nowIso, offsetClock, parseOffset, systemClock } from '../../src/core/clock.js';

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

  it('reads an ISO date-time without a zone as UTC, and one with a zone as it says', () => {
    const utc = Date.UTC(2026, 11, 2, 10, 0, 0);
    expect(isoInstantMs('2026-12-02T10:00:00')).toBe(utc);
    expect(isoInstantMs('2026-12-02 10:00')).toBe(utc);
    expect(isoInstantMs('2026-12-02T10:00:00.1234567')).toBe(utc + 123);
    expect(isoInstantMs('2026-12-02T10:00:00Z')).toBe(utc);
    expect(isoInstantMs('2026-12-02T12:00:00+02:00')).toBe(utc);
    expect(isoInstantMs('2026-12-02T05:00:00-0500')).toBe(utc);
    expect(isoInstantMs('2026-12-02')).toBe(Date.UTC(2026, 11, 2));
  });

  it('reads no instant from text that is not an ISO date, or names no real day or time', () => {
    for (const bad of [
      '',
      'soon',
      '12/02/2026 10:00:00',
      'Wed, 02 Dec 2026 10:00:00',
      '2026-02-30',
      '2026-12-02T24:00:00',
      '2026-12-02T10:60',
      '2026-12-02T10:00+15:00',
      '2026-12-02Z',
      null,
      1796205600000,
    ]) {
      expect(isoInstantMs(bad), String(bad)).toBeUndefined();
    }
  });
});
