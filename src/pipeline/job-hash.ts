import { createHash } from 'node:crypto';
import type { ManifestJob } from '../manifest/model.js';

/**
 * A stable fingerprint of a manifest job as the user wrote it (after defaults are merged),
 * stored in the ledger at submission. Hashing the manifest entry rather than the resolved
 * request keeps the fingerprint stable when resolution changes from day to day (an omitted
 * dateDue becomes a different earliest date tomorrow), so only a real edit by the user is
 * reported as "changed after submission".
 */
export function jobHash(job: ManifestJob): string {
  // `cancel` and the patchable fields (PATCH /Jobs/{n}: description, comments, orderNumber,
  // mustDate, dateDue) are declarative changes applied to a submitted job, not part of the
  // order's identity: they are compared field by field instead (apply-changes.ts).
  const {
    cancel: _cancel,
    description: _d,
    orderComment: _c,
    orderNumber: _o,
    mustDate: _m,
    dateDue: _due,
    ...rest
  } = job;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
}

/** JSON with object keys sorted at every level, so key order in the file does not matter. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
