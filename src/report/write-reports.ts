import { rm } from 'node:fs/promises';
import type { Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { CsvLimits } from '../manifest/read-input.js';
import { reportHasErrors } from './build-report.js';
import type { ResultReport } from './model.js';
import { reportPaths, type ReportPaths } from './report-paths.js';
import { writeErrorsTxt } from './write-errors-txt.js';
import { writeResultCsv } from './write-result-csv.js';
import { writeResultJson } from './write-result-json.js';

export interface WrittenReports extends Partial<ReportPaths> {
  json: string;
  csv: string;
  /** Set only when errors.txt was written (something failed). */
  errors?: string;
}

/**
 * Writes the three reports next to the input, each atomically: result.json, result.csv,
 * and errors.txt when something failed (a stale errors.txt is removed when nothing did).
 * Safe to call again after every job outcome.
 */
export async function writeReports(
  report: ResultReport,
  opts: { manifest?: Manifest; mapping?: Mapping; csvLimits?: Partial<CsvLimits> } = {},
): Promise<WrittenReports> {
  const paths = reportPaths(report.input.file);
  await writeResultJson(paths.json, report);
  await writeResultCsv(paths.csv, report, opts);
  const wroteErrors = reportHasErrors(report)
    ? await writeErrorsTxt(paths.errors, report)
    : await removeErrorsTxt(paths.errors);
  return { json: paths.json, csv: paths.csv, ...(wroteErrors ? { errors: paths.errors } : {}) };
}

async function removeErrorsTxt(path: string): Promise<false> {
  await rm(path, { force: true });
  return false;
}
