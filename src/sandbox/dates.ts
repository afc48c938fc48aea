import type { EarliestShipDate } from '../api/types.js';
import type { LocationDef } from './data/regions.js';

/**
 * Calendar arithmetic in a location's timezone, with no date library: Intl gives the
 * local wall-clock parts and the UTC offset; everything else is plain date-only math.
 */

// Building an Intl.DateTimeFormat costs far more than using one, and every POST /Jobs needs
// several, so one of each kind is kept per time zone.
const formats = new Map<string, Intl.DateTimeFormat>();

function format(kind: 'date' | 'offset', timeZone: string): Intl.DateTimeFormat {
  const key = `${kind} ${timeZone}`;
  let f = formats.get(key);
  if (!f) {
    f =
      kind === 'date'
        ? new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
        : new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    formats.set(key, f);
  }
  return f;
}

/** `YYYY-MM-DD` of an instant, as seen in `timeZone`. */
function localDate(instant: Date, timeZone: string): string {
  const parts = format('date', timeZone).formatToParts(instant);
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? '00';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** Offset of `timeZone` from UTC at `instant`, in minutes (e.g. -300 for America/Chicago in summer). */
function offsetMinutes(instant: Date, timeZone: string): number {
  const name =
    format('offset', timeZone)
      .formatToParts(instant)
      .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  if (!m) return 0;
  const sign = m[1] === '-' ? -1 : 1;
  return sign * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

/** The UTC instant of wall-clock `date` + `time` (HH:MM:SS) in `timeZone`. */
function zonedToUtc(date: string, time: string, timeZone: string): Date {
  const guess = new Date(`${date}T${time}Z`);
  const off = offsetMinutes(guess, timeZone);
  const first = new Date(guess.getTime() - off * 60_000);
  // Correct once more in case the guess and the answer straddle a DST change.
  const off2 = offsetMinutes(first, timeZone);
  return off2 === off ? first : new Date(guess.getTime() - off2 * 60_000);
}

function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

function isWeekend(date: string): boolean {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day === 0 || day === 6;
}

/** Adds `n` business days, skipping weekends and any date in `excluded`. */
function addBusinessDays(date: string, n: number, excluded: ReadonlySet<string>): string {
  let d = date;
  let left = n;
  while (left > 0) {
    d = addDays(d, 1);
    if (!isWeekend(d) && !excluded.has(d)) left--;
  }
  return d;
}

/** Parses a request date (`YYYY-MM-DD` or an ISO date-time) to its date part; null if invalid. */
export function parseRequestDate(value: string): string | null {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(value.trim());
  if (!m) return null;
  const d = new Date(`${m[1]}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== m[1]) return null;
  return m[1];
}

/** An ISO string without milliseconds (the API's style). */
export function isoSeconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export const DAY_MS = 86_400_000;

/** The instant `days` days before `start`, without milliseconds. */
export const daysBefore = (start: Date, days: number): string => isoSeconds(new Date(start.getTime() - days * DAY_MS));

/** The earliest ship date of docs/sandbox.md (Due date), from the sandbox clock; despatch is at 17:00 local. */
const LEAD_BUSINESS_DAYS = 3;
const CUTOFF_HOUR = 14;

function holidays(now: Date, timezone: string): string[] {
  const year = Number(localDate(now, timezone).slice(0, 4));
  return [year, year + 1].flatMap((y) => [`${y}-12-25`, `${y}-12-26`, `${y + 1}-01-01`]);
}

export function earliestShipDay(now: Date, location: LocationDef, processCodes: string[] = []): string {
  const tz = location.timezone;
  const today = localDate(now, tz);
  const localHour = new Date(now.getTime() + offsetMinutes(now, tz) * 60_000).getUTCHours();
  let days = LEAD_BUSINESS_DAYS;
  if (localHour >= CUTOFF_HOUR) days += 1;
  if (processCodes.some((p) => p.toUpperCase() === 'SCR')) days += 2;
  return addBusinessDays(today, days, new Set(holidays(now, tz)));
}

export function earliestShipDate(now: Date, location: LocationDef, processCodes: string[] = []): EarliestShipDate {
  const day = earliestShipDay(now, location, processCodes);
  const today = localDate(now, location.timezone);
  return {
    shippingDateUtc: isoSeconds(zonedToUtc(day, '17:00:00', location.timezone)),
    shippingDateLocal: `${day}T17:00:00`,
    timezone: location.timezone,
    dateExclusions: holidays(now, location.timezone)
      .filter((d) => d >= today)
      .map((d) => ({ dateFrom: d, dateTo: d })),
  };
}
