/**
 * The sandbox clock: starts at a chosen instant, runs with real time, and can be moved
 * forward by the admin API. Tokens, ship dates, promo expiry and job progress all read it,
 * so tests can jump days ahead without waiting.
 */
/**
 * How far the clock may be moved forward in all: a century, room for any test of ship dates or
 * expiry, while every instant it reads stays a four-digit year that dates and ISO texts handle.
 */
export const MAX_CLOCK_OFFSET_MS = 100 * 365.25 * 24 * 60 * 60 * 1000;

/** The latest start instant a saved state may name (the year 9000), for the same reason. */
export const LATEST_CLOCK_START_MS = Date.UTC(9000, 0, 1);

export interface SandboxClock {
  now(): Date;
  nowMs(): number;
  /** Throws a RangeError past MAX_CLOCK_OFFSET_MS in all. */
  advance(ms: number): void;
  /** How far admin advances have moved it (kept with a persisted sandbox's state). */
  offsetMs(): number;
  /** Back to the start instant plus real time elapsed (used by reset). */
  resetOffset(): void;
}

export function createClock(start: Date = new Date()): SandboxClock {
  const startMs = start.getTime();
  const realStart = Date.now();
  let offset = 0;
  const nowMs = (): number => startMs + (Date.now() - realStart) + offset;
  return {
    nowMs,
    now: () => new Date(nowMs()),
    advance: (ms) => {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the clock only moves forward');
      if (ms > MAX_CLOCK_OFFSET_MS - offset)
        throw new RangeError(`the clock moves at most ${MAX_CLOCK_OFFSET_MS} ms forward in all`);
      offset += ms;
    },
    offsetMs: () => offset,
    resetOffset: () => {
      offset = 0;
    },
  };
}
