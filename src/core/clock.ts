/**
 * htorder's calendar clock: the one source of "now" for every rule that reads the date or time of
 * day (the suspected-duplicate window, the daily budget's day, a saved plan's age, retention, the
 * timestamps in reports and the ledger). The composition room makes one per process and passes it
 * down; a test or a rehearsal moves it to play a later night. Elapsed-time measurements (timeouts,
 * backoff, how long an input took) and leases keep using the real clock: they measure waiting and
 * whether a holder is alive, not dates, and a calendar moved forward must never make a live lease
 * holder look dead.
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The real clock moved by `offsetMs` (forward or back). */
export function offsetClock(offsetMs: number, base: Clock = systemClock): Clock {
  if (offsetMs === 0) return base;
  return { now: () => base.now() + offsetMs };
}

/** `clock.now()` as a Date. */
export function nowDate(clock: Clock): Date {
  return new Date(clock.now());
}

/** `clock.now()` as an ISO 8601 text. */
export function nowIso(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

const DAY_MS = 86_400_000;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: DAY_MS };

/**
 * A signed duration as people write it (`+2d`, `36h`, `-90m`, `1d12h`, `0`), in milliseconds, or
 * undefined when the text is not one. Bounded to a century either way, so every instant it leads
 * to stays a four-digit year.
 */
export function parseOffset(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed.length > 40) return undefined;
  const match = /^([+-]?)((?:\d{1,9}(?:ms|s|m|h|d))+|0)$/.exec(trimmed);
  if (!match) return undefined;
  let total = 0;
  for (const part of (match[2] ?? '').matchAll(/(\d{1,9})(ms|s|m|h|d)/g)) {
    total += Number(part[1]) * (UNIT_MS[part[2] ?? 'ms'] ?? 1);
  }
  if (total > 100 * 365.25 * DAY_MS) return undefined;
  return match[1] === '-' ? -total : total;
}

/** A non-negative length of time in parseOffset's notation (`12h`, `7d`, `1d12h`, `90s`, `0`): parseOffset reads it back. */
export function durationText(ms: number): string {
  if (!(ms > 0)) return '0';
  let rest = Math.round(ms);
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const size = UNIT_MS[unit] ?? 1;
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}
