import type { EarliestShipDate } from '../../api/types.js';
import type { Diagnostic, SourceMap } from '../../manifest/model.js';
import { diagnostic } from './diagnostic.js';

/** The earliest ship date as a local calendar date (YYYY-MM-DD). */
export function earliestLocalDate(earliest: EarliestShipDate): string {
  return earliest.shippingDateLocal.slice(0, 10);
}

/**
 * A `dateDue` before the earliest ship date is not refused: the API moves it to the
 * earliest date. That is worth a warning, not an error.
 */
export function checkDateDue(
  dateDue: string | undefined,
  earliest: EarliestShipDate,
  jobIndex: number,
  sources: SourceMap,
): Diagnostic[] {
  if (dateDue === undefined) return [];
  const earliestDate = earliestLocalDate(earliest);
  if (dateDue.slice(0, 10) >= earliestDate) return [];
  return [
    diagnostic(
      sources,
      'warning',
      'dateDue.before-earliest',
      `jobs[${jobIndex}].dateDue`,
      `dateDue ${dateDue} is before the earliest ship date ${earliestDate}; the API will move the job to ${earliestDate}`,
    ),
  ];
}
