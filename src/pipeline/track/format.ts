import { redactUrl } from '../../core/log/redact.js';
import type { JobTracking } from '../../report/tracking-model.js';
import { day, type TrackedJob, type TrackResult } from './track.js';

/**
 * Terminal and --json output of `htorder track`. The invoice link is signed and
 * time-limited: it is stored in the reports but shown here only without its query string.
 */

export function formatTable(jobs: readonly TrackedJob[]): string {
  const rows: string[][] = [['job', 'order', 'status', 'due', 'shipped', 'tracking', 'invoice']];
  for (const j of unique(jobs)) {
    const t = j.tracking;
    rows.push([
      String(j.jobNumber),
      j.orderNumber ?? '-',
      t.problem && t.status === null ? `? (${t.problem})` : (t.status ?? '-') + (t.problem ? ` (${t.problem})` : ''),
      day(t.dateDue) ?? '-',
      shipped(t),
      t.tracking
        .map((x) => x.trackingNumber ?? x.trackingLink ?? '')
        .filter(Boolean)
        .join(', ') || '-',
      t.invoiceFile ? (t.invoiceNumber ?? 'yes') : '-',
    ]);
  }
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => r[c]?.length ?? 0)));
  return `${rows
    .map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** Only the jobs that changed, one line each: `700001 PO-1: status Scheduled → In Production`. */
export function formatChanges(jobs: readonly TrackedJob[], at: Date): string {
  const lines = unique(jobs)
    .filter((j) => j.changes.length > 0)
    .map((j) => `${at.toISOString()} ${j.jobNumber} ${j.orderNumber ?? '-'}: ${j.changes.join('; ')}`);
  return lines.length ? `${lines.join('\n')}\n` : '';
}

export function shipped(t: JobTracking): string {
  if (t.dateOut === null) return '-';
  const d = t.shippedDaysToProcess;
  const how = t.shippedDateStatus ?? (d === null ? null : d < 0 ? `${-d}d early` : d > 0 ? `${d}d late` : 'on time');
  return `${day(t.dateOut)}${how ? ` (${how})` : ''}`;
}

/** The --json document: every job (or only the changed ones), with the invoice link redacted. */
export function jsonResult(result: TrackResult, onlyChanged = false): unknown {
  return {
    reportsWritten: result.reportsWritten,
    incomplete: result.incomplete,
    jobs: unique(result.jobs)
      .filter((j) => !onlyChanged || j.changes.length > 0)
      .map((j) => ({
        jobNumber: j.jobNumber,
        orderNumber: j.orderNumber,
        report: j.reportFile ?? null,
        changes: j.changes,
        tracking: redactTracking(j.tracking),
      })),
  };
}

export function redactTracking(t: JobTracking): JobTracking {
  return t.invoiceFile ? { ...t, invoiceFile: { ...t.invoiceFile, uri: redactUrl(t.invoiceFile.uri) } } : t;
}

/** One line per job even when two reports name the same job. */
function unique(jobs: readonly TrackedJob[]): TrackedJob[] {
  const seen = new Set<number>();
  return jobs.filter((j) => {
    if (seen.has(j.jobNumber)) return false;
    seen.add(j.jobNumber);
    return true;
  });
}
