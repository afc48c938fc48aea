import { hash } from 'node:crypto';
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
  return hash('sha256', canonicalJson(rest), 'hex');
}

/**
 * JSON with object keys sorted at every level (by UTF-16 code units), so key order in the
 * file does not matter; keys whose value is undefined are left out. The ledger keeps these
 * fingerprints: the text must never change.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).filter((key) => object[key] !== undefined);
    return `{${keys
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
