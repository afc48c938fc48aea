import type { EarliestShipDate } from '../api/types.js';
import type { LocationDef } from './data/regions.js';
import { addBusinessDays, localDate, offsetMinutes, zonedToUtc, isoSeconds } from './dates.js';

/**
 * The earliest ship date, a live calculation from the sandbox clock:
 * 3 business days after today in the factory's timezone, +1 after the 14:00 local cut-off,
 * +2 when screen print (SCR) is among the processes; weekends and the listed holidays
 * (25–26 Dec, 1 Jan) are skipped. Despatch is at 17:00 local on that date.
 */
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
