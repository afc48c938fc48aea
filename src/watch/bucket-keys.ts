/**
 * The keys a bucket watcher (sources/bucket-source.ts) makes from a dropped object's name, in
 * one place, with the longest of them: S3 refuses a key over 1,024 bytes, so a drop whose
 * derived keys do not all fit is refused before it is claimed rather than failing half-way.
 */

import { reportPaths } from '../report/report-paths.js';
import { timestampedName } from './sources/drop-names.js';
import type { DropLayout } from './sources/model.js';

/** The longest key S3 takes, in bytes of UTF-8; a longer one is refused (400 KeyTooLongError). */
export const S3_MAX_KEY_BYTES = 1024;

/** The key of `name` at the top of drop prefix `prefix` (empty or ending in `/`) or in one of its sub-prefixes. */
export function dropKey(prefix: string, layout: Required<DropLayout>, which: keyof DropLayout | 'top', name: string) {
  return which === 'top' ? `${prefix}${name}` : `${prefix}${layout[which]}/${name}`;
}

/** The key of the claim on `name` under `root` (bucket-lease.ts, claimsRoot). */
export function claimKey(root: string, name: string): string {
  return `${root}${name}.claim`;
}

/**
 * The longest key derived from dropped `name`: its copy in processing/, its copies in done/,
 * failed/ and held/ under the widest timestamped name (the 999th clash of its name, as
 * drop-names.ts allows for) with the reports beside each, and its claim when the claims are
 * kept in a bucket under `claims` (their root).
 */
export function longestDerivedKey(prefix: string, layout: Required<DropLayout>, name: string, claims?: string): string {
  const stamped = timestampedName(name, new Date(0), 999);
  const keys = [dropKey(prefix, layout, 'processing', name)];
  for (const outcome of ['done', 'failed', 'held'] as const) {
    const key = dropKey(prefix, layout, outcome, stamped);
    keys.push(key, ...Object.values(reportPaths(key)));
  }
  if (claims !== undefined) keys.push(claimKey(claims, name));
  return keys.reduce((a, b) => (keyBytes(b) > keyBytes(a) ? b : a));
}

/** Why dropped `name` cannot be taken (a derived key S3 would refuse), for people; undefined when all fit. */
export function keyTooLong(prefix: string, layout: Required<DropLayout>, name: string, claims?: string) {
  const key = longestDerivedKey(prefix, layout, name, claims);
  const bytes = keyBytes(key);
  if (bytes <= S3_MAX_KEY_BYTES) return undefined;
  return (
    `a key derived from it would be ${bytes} bytes (${key.slice(0, 40)}…${key.slice(-60)}), over S3's limit of ${S3_MAX_KEY_BYTES} ` +
    `bytes for a key; it is left where it was dropped. Shorten its name (${keyBytes(name)} bytes) by at least ` +
    `${bytes - S3_MAX_KEY_BYTES} bytes, or use a shorter drop prefix or state prefix, and drop it again`
  );
}

function keyBytes(key: string): number {
  return Buffer.byteLength(key, 'utf8');
}

/** Which dropped names have derived keys that fit (keyTooLong), telling once per name of those that do not. */
export class KeyLengthCheck {
  private readonly told = new Set<string>();

  constructor(
    private readonly prefix: string,
    private readonly layout: Required<DropLayout>,
    /** The claims' root when they are kept in a bucket. */
    private readonly claims: string | undefined,
    private readonly tell: ((name: string, why: string) => void) | undefined,
  ) {}

  fits(name: string): boolean {
    const why = keyTooLong(this.prefix, this.layout, name, this.claims);
    if (why !== undefined && !this.told.has(name)) {
      this.told.add(name);
      this.tell?.(name, why);
    }
    return why === undefined;
  }
}
