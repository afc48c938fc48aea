import type { ManifestJob } from '../model.js';
import type { Finding } from './rule.js';

/** dateDue is a real calendar date written YYYY-MM-DD; mustDate without a date means nothing. */
export function dueDate(job: ManifestJob, j: number): Finding[] {
  const field = `jobs[${j}].dateDue`;
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
      : [];
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
  return [];
}

export function isCalendarDate(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}
