import type { Manifest, ManifestItem, ManifestJob, Severity, SourceLocation } from '../model.js';

/**
 * Local rules: checks that need no account data (no network). Each rule is a small pure
 * function returning findings; the runner attaches locations. A rule sees a job only after
 * it passed the schema, so types are as declared — rules still check defensively, because
 * the pipeline may hand them manifests built in code.
 */

export interface Finding {
  code: string;
  message: string;
  /** Readable path of the offending value (`jobs[0].items[2].quantity`). */
  field: string;
  /** Default 'error'. */
  severity?: Severity;
}

export type JobRule = (job: ManifestJob, jobIndex: number) => Finding[];
export type ManifestRule = (manifest: Manifest) => Finding[];

export function itemPath(jobIndex: number, itemIndex: number, field?: string): string {
  return `jobs[${jobIndex}].items[${itemIndex}]${field ? `.${field}` : ''}`;
}

/** For each item of a job: (item, index). Skips holes left by non-object items. */
export function eachItem(job: ManifestJob, fn: (item: ManifestItem, index: number) => Finding[]): Finding[] {
  return (Array.isArray(job.items) ? job.items : []).flatMap((item, i) =>
    item && typeof item === 'object' ? fn(item, i) : [],
  );
}

/** "line 3, column 18" or "row 7", for messages that name a second location. */
export function describeLocation(loc: SourceLocation): string {
  if (loc.row !== undefined) return `row ${loc.row}`;
  if (loc.line !== undefined) return `line ${loc.line}, column ${loc.column ?? 1}`;
  return loc.file;
}

export function isPositiveInteger(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1;
}
