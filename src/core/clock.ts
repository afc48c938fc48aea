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

const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * An ISO 8601 date or date-time, from the API or from a file htorder wrote, in milliseconds since
 * the epoch; undefined when the text is not one, or names no real day or time. The spec says only
 * that dates and times are ISO 8601 and does not show whether they carry a zone: its times are
 * named …Utc and a .NET-style API writes UTC without a `Z`, so a date-time without a zone is UTC,
 * never the host's zone (Date.parse reads it as local time: a host in another zone would get
 * another answer). A date alone is that calendar day, from its start in UTC. Text in other forms
 * (`12/02/2026`, which Date.parse would also read as local time) is no instant.
 */
export function isoInstantMs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = ISO_INSTANT.exec(text.trim());
  if (!m) return undefined;
  const n = (i: number): number => Number(m[i] ?? 0);
  const day = Date.UTC(n(1), n(2) - 1, n(3));
  if (new Date(day).toISOString().slice(0, 10) !== `${m[1]}-${m[2]}-${m[3]}`) return undefined;
  if (n(4) > 23 || n(5) > 59 || n(6) > 59) return undefined;
  const offset = zoneOffsetMs(m[8]);
  if (offset === undefined) return undefined;
  const fraction = Math.floor(Number(`0.${m[7] ?? 0}`) * 1000);
  return day + ((n(4) * 60 + n(5)) * 60 + n(6)) * 1000 + fraction - offset;
}

/** `Z`, `+02:00`, `-0530`, `+09` (or no zone: UTC) → its offset from UTC in ms; undefined beyond ±14 h. */
function zoneOffsetMs(zone: string | undefined): number | undefined {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0);
  if (minutes > 14 * 60 || Number(digits.slice(2) || 0) > 59) return undefined;
  return (zone.startsWith('-') ? -minutes : minutes) * 60_000;
}
