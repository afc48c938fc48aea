import { jobIndexOf } from './field-path.js';
import type { Diagnostic, SourceLocation } from './model.js';

/** Helpers for lists of Diagnostics: the error test, the per-job split and the ordering. */

export function isError(d: Diagnostic): boolean {
  return d.severity === 'error';
}

/**
 * Indexes of jobs that have at least one error. When an error is not tied to one job
 * (`version`, `defaults`, a syntax error), every job is affected: `all` is true.
 */
export function invalidJobs(diagnostics: readonly Diagnostic[]): { all: boolean; jobs: Set<number> } {
  const jobs = new Set<number>();
  let all = false;
  for (const d of diagnostics) {
    if (!isError(d)) continue;
    const j = jobIndexOf(d.field);
    if (j === undefined) all = true;
    else jobs.add(j);
  }
  return { all, jobs };
}

/** Sorts in document order: by line/row, then column; diagnostics without a location last (sort is stable). */
export function sortDiagnostics(diagnostics: Diagnostic[]): Diagnostic[] {
  const line = (s: SourceLocation | undefined) => s?.line ?? s?.row ?? Number.MAX_SAFE_INTEGER;
  return diagnostics.sort(
    (a, b) => line(a.source) - line(b.source) || (a.source?.column ?? 0) - (b.source?.column ?? 0),
  );
}
