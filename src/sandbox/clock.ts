/**
 * The sandbox clock: starts at a chosen instant, runs with real time, and can be moved
 * forward by the admin API. Tokens, ship dates, promo expiry and job progress all read it,
 * so tests can jump days ahead without waiting.
 */
export interface SandboxClock {
  now(): Date;
  nowMs(): number;
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
      offset += ms;
    },
    offsetMs: () => offset,
    resetOffset: () => {
      offset = 0;
    },
  };
}
