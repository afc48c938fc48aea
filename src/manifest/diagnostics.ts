import { jobIndexOf } from './field-path.js';
import type { Diagnostic, SourceLocation } from './model.js';

/** Helpers for lists of Diagnostics: error tests, per-job split, ordering and one-line rendering. */

export function isError(d: Diagnostic): boolean {
  return d.severity === 'error';
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some(isError);
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

/** Document order: by line/row, then column; diagnostics without a location last, stable. */
export function sortDiagnostics(diagnostics: Diagnostic[]): Diagnostic[] {
  const pos = (s: SourceLocation | undefined): [number, number] => [
    s?.line ?? s?.row ?? Number.MAX_SAFE_INTEGER,
    s?.column ?? 0,
  ];
  return diagnostics
    .map((d, i) => ({ d, i, p: pos(d.source) }))
    .sort((a, b) => a.p[0] - b.p[0] || a.p[1] - b.p[1] || a.i - b.i)
    .map((x) => x.d);
}

/**
 * Compiler style: `orders.yaml:42:9: jobs[3].items[0].quantity: message` (YAML/JSON) or
 * `orders.csv:12: quantity: message` (CSV: row, then the column's own header).
 */
export function formatDiagnostic(d: Diagnostic, fileLabel?: string): string {
  const s = d.source;
  const file = fileLabel ?? s?.file ?? '';
  const prefix = d.severity === 'warning' ? 'warning: ' : '';
  if (s?.row !== undefined) {
    const column = s.columnName ?? d.field;
    return `${file}:${s.row}: ${column ? `${column}: ` : ''}${prefix}${d.message}`;
  }
  const where = s?.line !== undefined ? `${file}:${s.line}:${s.column ?? 1}` : file;
  return `${where}: ${d.field ? `${d.field}: ` : ''}${prefix}${d.message}`;
}
