import type { ManifestJob } from '../model.js';
import { excelSerialText } from '../../core/excel-date.js';
import { NOTHING, type Finding } from './rule.js';

/**
 * Dates already found valid. This rule runs once per job and the jobs of a big file share a
 * few hundred dates at most: a date seen before needs no regular expressions and no Date.
 * Only valid dates are remembered (a bad one is judged, and reported, every time), and the
 * set is bounded: past the bound a new date is simply checked in full.
 */
const validDates = new Set<string>();
const VALID_DATES_KEPT = 4096;

/** dateDue is a real calendar date written YYYY-MM-DD; mustDate without a date means nothing. */
export function dueDate(job: ManifestJob, j: number): readonly Finding[] {
  if (typeof job.dateDue === 'string' && validDates.has(job.dateDue)) return NOTHING;
  if (job.dateDue === undefined || job.dateDue === null) {
    return job.mustDate === true
      ? [
          {
            code: 'date.must-without-date',
            field: `jobs[${j}].mustDate`,
            severity: 'warning',
            message: 'mustDate has no effect without dateDue',
          },
        ]
      : NOTHING;
  }
  const field = `jobs[${j}].dateDue`;
  const serial = excelSerial(job.dateDue);
  if (serial !== undefined) {
    return [
      {
        code: 'date.excel-serial',
        field,
        message:
          `"${job.dateDue}" is a spreadsheet's serial day number (it stands for ${serial}), not a date: write dates as YYYY-MM-DD, ` +
          'or, for an export whose dates are serial numbers, read the column with $excelDate in the mapping ' +
          '(fields: { dateDue: "$excelDate(`Column`)" }, see docs/mappings.md)',
      },
    ];
  }
  if (!isCalendarDate(job.dateDue)) {
    return [
      {
        code: 'date.invalid',
        field,
        message: `must be a calendar date written YYYY-MM-DD, got ${JSON.stringify(job.dateDue)}`,
      },
    ];
  }
  if (validDates.size < VALID_DATES_KEPT) validDates.add(job.dateDue);
  return NOTHING;
}

export function isCalendarDate(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/**
 * The date a spreadsheet serial day number stands for, when `value` looks like one: five
 * digits (1954-10-19 … 2173-10-14), optionally with a time fraction. Undefined otherwise.
 */
function excelSerial(value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value).trim();
  if (!/^\d{5}(?:[.,]\d+)?$/.test(text)) return undefined;
  return excelSerialText(Number(text.replace(',', '.')));
}
