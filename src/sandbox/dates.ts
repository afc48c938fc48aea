/**
 * Calendar arithmetic in a location's timezone, with no date library: Intl gives the
 * local wall-clock parts and the UTC offset; everything else is plain date-only math.
 */

// Building an Intl.DateTimeFormat costs far more than using one, and every POST /Jobs needs
// several, so one of each kind is kept per time zone.
const dateFormats = new Map<string, Intl.DateTimeFormat>();
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

function cached(
  cache: Map<string, Intl.DateTimeFormat>,
  timeZone: string,
  make: () => Intl.DateTimeFormat,
): Intl.DateTimeFormat {
  let f = cache.get(timeZone);
  if (!f) {
    f = make();
    cache.set(timeZone, f);
  }
  return f;
}

/** `YYYY-MM-DD` of an instant, as seen in `timeZone`. */
export function localDate(instant: Date, timeZone: string): string {
  const format = cached(
    dateFormats,
    timeZone,
    () => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }),
  );
  const parts = format.formatToParts(instant);
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? '00';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** Offset of `timeZone` from UTC at `instant`, in minutes (e.g. -300 for America/Chicago in summer). */
export function offsetMinutes(instant: Date, timeZone: string): number {
  const name =
    cached(offsetFormats, timeZone, () => new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' }))
      .formatToParts(instant)
      .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  if (!m) return 0;
  const sign = m[1] === '-' ? -1 : 1;
  return sign * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

/** The UTC instant of wall-clock `date` + `time` (HH:MM:SS) in `timeZone`. */
export function zonedToUtc(date: string, time: string, timeZone: string): Date {
  const guess = new Date(`${date}T${time}Z`);
  const off = offsetMinutes(guess, timeZone);
  const first = new Date(guess.getTime() - off * 60_000);
  // Correct once more in case the guess and the answer straddle a DST change.
  const off2 = offsetMinutes(first, timeZone);
  return off2 === off ? first : new Date(guess.getTime() - off2 * 60_000);
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export function isWeekend(date: string): boolean {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day === 0 || day === 6;
}

/** Adds `n` business days, skipping weekends and any date in `excluded`. */
export function addBusinessDays(date: string, n: number, excluded: ReadonlySet<string>): string {
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
