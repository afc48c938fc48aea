import { basename } from 'node:path';

/** Reports live next to their input, named after it in full: `orders.csv` → `orders.csv.result.json`. */
export interface ReportPaths {
  json: string;
  csv: string;
  errors: string;
}

export function reportPaths(inputFile: string): ReportPaths {
  return { json: `${inputFile}.result.json`, csv: `${inputFile}.result.csv`, errors: `${inputFile}.errors.txt` };
}

/** Where `htorder track` writes input `inputFile`'s tracking for the shop to import (docs/track.md). */
export function trackingPath(inputFile: string): string {
  return `${inputFile}.tracking.csv`;
}

/** The endings of the files htorder writes beside an input (its reports and its tracking file). */
const WRITTEN_SUFFIXES: readonly string[] = [...Object.values(reportPaths('')), trackingPath('')];

/**
 * Whether `file` is named as one of htorder's own reports or tracking files, whatever the case:
 * never an input, whether a watcher finds it in its drop folder or a cron's glob
 * (`exports/*.csv`) hands it to `run` beside tonight's export.
 */
export function isReportName(file: string): boolean {
  const lower = basename(file).toLowerCase();
  return WRITTEN_SUFFIXES.some((s) => lower.endsWith(s));
}

/** The file system's limit on one name (NAME_MAX), in bytes. */
const NAME_MAX_BYTES = 255;
/** The longest report suffix (`.result.json`) and an atomic write's temporary name around it (`.` … `.PID.XXXXXXXX.tmp`). */
const REPORT_NAME_OVERHEAD = '.result.json'.length + 25;

/**
 * Why the reports of `inputFile` could not be written, checked before anything is submitted:
 * a name whose report names pass the file system's 255-byte limit would otherwise be
 * submitted and then fail to report. Undefined when the names fit.
 */
export function reportNameProblem(inputFile: string): string | undefined {
  const bytes = Buffer.byteLength(basename(inputFile), 'utf8');
  const max = NAME_MAX_BYTES - REPORT_NAME_OVERHEAD;
  if (bytes <= max) return undefined;
  return `the file name is ${bytes} bytes long; its reports (NAME.result.json …) would pass the file system's limit of ${NAME_MAX_BYTES} bytes for a name. Rename it to at most ${max} bytes and run again; nothing was submitted`;
}
