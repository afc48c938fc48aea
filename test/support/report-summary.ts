import { JOB_STATUSES, type JobStatus, type ReportSummary } from '../../src/report/model.js';

/**
 * A report summary for tests: every status counted 0 unless given, `jobs` the sum of the given
 * counts unless given, the other totals 0 unless given. Built from JOB_STATUSES so a new status
 * needs no edit here.
 */
export function reportSummary(
  byStatus: Partial<Record<JobStatus, number>> = {},
  totals: Partial<Omit<ReportSummary, 'byStatus'>> = {},
): ReportSummary {
  const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, byStatus[s] ?? 0])) as Record<JobStatus, number>;
  return {
    jobs: Object.values(counts).reduce((a, b) => a + b, 0),
    items: 0,
    errors: 0,
    warnings: 0,
    ...totals,
    byStatus: counts,
  };
}
