import { hash } from 'node:crypto';
import { BoundedMemo } from '../core/bounded-memo.js';
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
 *
 * Every job is hashed several times a run (its fingerprint, its request before and after its
 * dry run, its content key), so this is written as one pass with a quoted-key memo instead of
 * entries, filter, map and join: `npm run bench -- --jobs 10000 --latency 5` shows it in the
 * main thread's time a job. job-hash.test.ts holds it to the first implementation's text.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = '[';
    // As join does: a hole, or an item with no JSON (undefined), is an empty place.
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + (canonicalJson(value[i]) ?? '');
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  let text = '{';
  let first = true;
  for (const key of Object.keys(object).sort()) {
    const item = object[key];
    if (item === undefined) continue;
    text += `${first ? '' : ','}${quotedKey(key)}:${canonicalJson(item)}`;
    first = false;
  }
  return `${text}}`;
}

/** A run's keys are a few field names, each quoted once; a hostile file's many keys only restart the memo. */
const quotedKeys = new BoundedMemo<string, string>(4096);

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    quotedKeys.set(key, quoted);
  }
  return quoted;
}
