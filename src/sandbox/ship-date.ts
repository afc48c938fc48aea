import type { EarliestShipDate } from '../api/types.js';
import type { LocationDef } from './data/regions.js';
import { addBusinessDays, localDate, offsetMinutes, zonedToUtc, isoSeconds } from './dates.js';

/** The earliest ship date of docs/sandbox.md (Due date), from the sandbox clock; despatch is at 17:00 local. */
const LEAD_BUSINESS_DAYS = 3;
const CUTOFF_HOUR = 14;

function holidays(now: Date, timezone: string): string[] {
  const year = Number(localDate(now, timezone).slice(0, 4));
  return [year, year + 1]
    .flatMap((y) => [`${y}-12-25`, `${y}-12-26`, `${y + 1}-01-01`])
    .filter((d, i, a) => a.indexOf(d) === i);
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
