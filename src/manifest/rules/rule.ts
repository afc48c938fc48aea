import type { ManifestItem, ManifestJob, Severity } from '../model.js';

/**
 * Local rules: checks that need no account data (no network) and that the schema cannot
 * express (required fields, types and quantities are the schema's). Each rule is a small pure
 * function returning findings; the runner attaches locations. Rules also see jobs the schema
 * faulted (a finding that restates a schema error is dropped later), so they trust no type.
 */

export interface Finding {
  code: string;
  message: string;
  /** Readable path of the offending value (`jobs[0].items[2].quantity`). */
  field: string;
  /** Default 'error'. */
  severity?: Severity;
}

/** A rule's findings: the runner only reads them, so a rule may return the shared NOTHING. */
export type JobRule = (job: ManifestJob, jobIndex: number) => readonly Finding[];

export function itemPath(jobIndex: number, itemIndex: number, field?: string): string {
  return `jobs[${jobIndex}].items[${itemIndex}]${field ? `.${field}` : ''}`;
}

/**
 * For each item of a job: (item, index); their findings in one new array (the caller may add
 * to it). Skips holes left by non-object items. A plain loop: a million items through flatMap
 * cost a temporary array per item.
 */
export function eachItem(job: ManifestJob, fn: (item: ManifestItem, index: number) => readonly Finding[]): Finding[] {
  const findings: Finding[] = [];
  const items: unknown = job.items;
  if (!Array.isArray(items)) return findings;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as ManifestItem | undefined;
    if (!item || typeof item !== 'object') continue;
    const found = fn(item, i);
    for (let f = 0; f < found.length; f++) findings.push(found[f]);
  }
  return findings;
}

/** What an item check returns when it finds nothing: shared, never modified (eachItem only reads it). */
export const NOTHING: readonly Finding[] = Object.freeze([]);
