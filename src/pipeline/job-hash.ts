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
  // One call, not a Hash object fed and finished: the text is a few hundred bytes.
  return hash('sha256', canonicalJson(rest), 'hex');
}

/**
 * JSON with object keys sorted at every level, so key order in the file does not matter.
 * The ledger keeps these fingerprints: the text must never change. Built by concatenation,
 * without an array per level. Keys sort by UTF-16 code units, as `<` compares them; an array
 * element JSON cannot hold is empty (as join writes it) and an object key whose value is
 * undefined is left out.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${canonicalJson(value[i]) ?? ''}`;
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).sort();
    let out = '{';
    let first = true;
    for (const key of keys) {
      const v = object[key];
      if (v === undefined) continue;
      out += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v)}`;
      first = false;
    }
    return `${out}}`;
  }
  return JSON.stringify(value);
}
