/**
 * Which names in a drop location are inputs. Pure: the same rules for folders and buckets.
 *
 * Writers often create a file under a temporary name and rename it when complete (browsers,
 * Office, rsync, scp clients), so those names are never taken; our own reports sit beside the
 * inputs and must never be read back as inputs; and a name is only ever a single path segment,
 * so nothing we derive from it can leave the watched location.
 */

import { isReportName, reportPaths } from '../../report/report-paths.js';
import { temporaryOf } from '../../storage/atomic-write.js';

export type NameVerdict =
  | { take: true }
  | { take: false; reason: 'hidden' | 'temporary' | 'report' | 'marker' | 'extension' | 'unsafe' };

/** What load-manifest.ts reads: delimited text by any of its usual names (a marketplace's report is `.txt`). */
export const INPUT_EXTENSIONS: readonly string[] = ['.yaml', '.yml', '.json', '.csv', '.tsv', '.txt', '.xlsx'];
/** `X.done` next to `X` says "X is complete, take it now" (optional, for writers that can make one). */
export const DONE_MARKER_SUFFIX = '.done';
const TEMPORARY_SUFFIXES = ['.tmp', '.part', '.crdownload', '.partial', '.swp'];

export function classifyName(name: string): NameVerdict {
  if (!isSafeName(name)) return { take: false, reason: 'unsafe' };
  const lower = name.toLowerCase();
  if (name.startsWith('.')) return { take: false, reason: 'hidden' };
  if (name.startsWith('~$') || name.endsWith('~') || TEMPORARY_SUFFIXES.some((s) => lower.endsWith(s))) {
    return { take: false, reason: 'temporary' };
  }
  // Our reports, and the tracking file `htorder track` writes beside them: never an input.
  if (isReportName(name)) return { take: false, reason: 'report' };
  if (lower.endsWith(DONE_MARKER_SUFFIX)) return { take: false, reason: 'marker' };
  if (!INPUT_EXTENSIONS.some((e) => lower.endsWith(e))) return { take: false, reason: 'extension' };
  return { take: true };
}

/** One path segment, nothing that a path join could turn into a parent or another folder. */
export function isSafeName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/** The input a marker `X.done` stands for, or undefined when `name` is not a marker. */
export function markedInput(name: string): string | undefined {
  return name.toLowerCase().endsWith(DONE_MARKER_SUFFIX) && name.length > DONE_MARKER_SUFFIX.length
    ? name.slice(0, -DONE_MARKER_SUFFIX.length)
    : undefined;
}

/** The names of the reports written beside input `name` (docs/reports.md). */
export function reportNames(name: string): string[] {
  return Object.values(reportPaths(name));
}

/**
 * A name for `name` that does not clash in done/ or failed/: the same name with a UTC
 * timestamp before the extension, `orders.csv` → `orders.20261121T060328123Z.csv`, so a file
 * dropped twice never overwrites the first one's results and still ends in its extension.
 */
export function timestampedName(name: string, at: Date, attempt = 0): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('.', '');
  const extra = attempt > 0 ? `-${attempt}` : '';
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}.${stamp}${extra}${name.slice(dot)}` : `${name}.${stamp}${extra}`;
}

/** What every timestamped name of `name` (timestampedName), and each of its reports' names, starts with. */
export function stampedStart(name: string): string {
  const dot = name.lastIndexOf('.');
  return `${dot > 0 ? name.slice(0, dot) : name}.`;
}

/**
 * The timestamped names of `name` (timestampedName) that `entries` are, or are reports of:
 * `orders.20261121T060328123Z.csv` and `orders.20261121T060328123Z-1.csv.result.json` are
 * `orders.csv`'s; `orders.backup.csv` is not.
 */
export function stampedNamesOf(name: string, entries: readonly string[]): string[] {
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot) : '';
  const stamped = new RegExp(`^${escaped(stampedStart(name))}\\d{8}T\\d{9}Z(?:-\\d+)?${escaped(ext)}`);
  const found = new Set<string>();
  for (const entry of entries) {
    const input = stamped.exec(entry)?.[0];
    if (input && [input, ...reportNames(input)].includes(entry)) found.add(input);
  }
  return [...found];
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The longest file name most file systems take (NAME_MAX), in bytes of UTF-8. */
export const NAME_MAX_BYTES = 255;

/**
 * What names derived from an input's add to it at most: a timestamped name in done/ or failed/
 * (`.20261121T060328123Z-999`, 24), its longest report suffix (`.result.json`, 12) and the
 * temporary name an atomic write uses for it (`.` + `.PID.XXXXXXXX.tmp`, 25 with a 10-digit pid).
 */
const DERIVED_OVERHEAD_BYTES = 24 + 12 + 25;

/** The longest input name watch takes (194 bytes); longer ones are set aside (shortName). */
export const MAX_INPUT_NAME_BYTES: number = NAME_MAX_BYTES - DERIVED_OVERHEAD_BYTES;

export function nameBytes(name: string): number {
  return Buffer.byteLength(name, 'utf8');
}

/**
 * A short, unique stand-in for a name too long to handle: its first 100 bytes (never cutting a
 * character), `~`, 12 hex digits of the full name's SHA-256, and its extension, so that
 * `aaaa…(250)….csv` becomes `aaaa…(100)~3f2a9c01b7de.csv` and two long names never share one.
 */
export function shortName(name: string, hashHex: string): string {
  const lower = name.toLowerCase();
  const ext = INPUT_EXTENSIONS.find((e) => lower.endsWith(e)) ?? '';
  let head = '';
  for (const ch of name.slice(0, name.length - ext.length)) {
    if (nameBytes(head + ch) > 100) break;
    head += ch;
  }
  return `${head}~${hashHex.slice(0, 12)}${name.slice(name.length - ext.length)}`;
}

/** The errors.txt of input `name`, too long to process, set aside as `short`. */
export function longNameErrors(name: string, short: string): string {
  return (
    `${short}: set aside unread: its name was ${nameBytes(name)} bytes long ("${name.slice(0, 60)}…"); ` +
    `watch takes names of up to ${MAX_INPUT_NAME_BYTES} bytes, because its reports, claim and ` +
    `timestamped names add to it and a file name may not exceed ${NAME_MAX_BYTES} bytes. ` +
    'Rename the file to a shorter name and drop it again.\n'
  );
}

/**
 * Whether `name` (in processing/, done/ or failed/) is one of htorder's own temporary files:
 * a claim renewal's or a report's `.NAME.PID.XXXXXXXX.tmp` (atomic-write.ts, the staged
 * reports of FolderSource.finish) or a stale claim moved aside, `.NAME.claim.XXXXXXXX.stale`.
 * Each lives for milliseconds; one found old was left by an instance killed mid-write.
 */
export function isOwnTemporary(name: string): boolean {
  return temporaryOf(name) !== undefined || /^\..+\.claim\.[0-9a-f]{8}\.stale$/.test(name);
}
