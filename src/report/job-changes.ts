import type { ResultReport } from './model.js';

/**
 * Which of a report's jobs changed, and when, for the writers' caches of encoded jobs
 * (encoded-batches.ts): a rewrite reuses the bytes of a batch of jobs only if none of them
 * changed since those bytes were made. Kept beside the report (a WeakMap keyed by it), not
 * in it, so nothing of it reaches result.json.
 *
 * Whatever changes a job (its fields, its items') after buildReport must call jobChanged, or
 * a cached rewrite shows it as it was: today that is only the pipeline's writeJob
 * (src/pipeline/job-report.ts). Code that changes a report without marking (track.ts sets
 * `tracking`) writes it without a cache.
 */
interface Changes {
  /** How many changes were marked: the clock the stamps below are read on. */
  count: number;
  /** Per job, `count` when it last changed (0: not since the report was built). */
  at: Float64Array;
}

const changes = new WeakMap<ResultReport, Changes>();

/** Marks job `index` of `report` as changed (its own fields or its items'). */
export function jobChanged(report: ResultReport, index: number): void {
  let c = changes.get(report);
  if (c === undefined || c.at.length !== report.jobs.length) {
    // A float per job (8 MB per million jobs), made at the first change: `check` never marks.
    const at = new Float64Array(report.jobs.length);
    if (c !== undefined) at.set(c.at.subarray(0, at.length));
    c = { count: c?.count ?? 0, at };
    changes.set(report, c);
  }
  c.at[index] = ++c.count;
}

/** The change clock now: bytes made now are valid for every job not marked after it. */
export function changeClock(report: ResultReport): number {
  return changes.get(report)?.count ?? 0;
}

/** Whether any of jobs `[from, to)` changed after the clock read `since`. */
export function changedSince(report: ResultReport, from: number, to: number, since: number): boolean {
  const c = changes.get(report);
  if (c === undefined) return false;
  const end = Math.min(to, c.at.length);
  for (let j = from; j < end; j++) if (c.at[j] > since) return true;
  return false;
}
