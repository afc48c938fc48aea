import { rm } from 'node:fs/promises';
import type { Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { CsvLimits } from '../manifest/read-input.js';
import type { NewFileOptions } from '../storage/atomic-write.js';
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
 * Where an input's reports go when not next to the file they were read from (`watch`: straight
 * into done/ or failed/, beside where the input ends up, written once).
 */
export interface ReportTarget {
  /** The three files: new names, never over earlier files (so no stale errors.txt is looked for). */
  paths: ReportPaths;
  /** What result.json names as the input (`input.file`): where the input ends up. */
  inputShownAs: string;
  /** Mode and group of the new files. */
  file?: NewFileOptions;
}

/**
 * Writes the three reports, each atomically: result.json, result.csv, and errors.txt when
 * something failed. Next to the input by default, where a stale errors.txt is removed when
 * nothing failed (safe to call again after every job outcome); or to `target`.
 * result.csv and errors.txt are written before result.json: they read the input (a CSV's own
 * cells) and name it (errors.txt's lines) by `report.input.file`, which then becomes
 * `target.inputShownAs` for result.json, and stays so.
 */
export async function writeReports(
  report: ResultReport,
  opts: { manifest?: Manifest; mapping?: Mapping; csvLimits?: Partial<CsvLimits>; target?: ReportTarget } = {},
): Promise<WrittenReports> {
  const { target, ...csvOpts } = opts;
  const paths = target?.paths ?? reportPaths(report.input.file);
  const file = target?.file;
  await writeResultCsv(paths.csv, report, { ...csvOpts, ...(file ? { file } : {}) });
  let wroteErrors = false;
  if (reportHasErrors(report)) wroteErrors = await writeErrorsTxt(paths.errors, report, file);
  else if (!target) await rm(paths.errors, { force: true });
  if (target) report.input.file = target.inputShownAs;
  await writeResultJson(paths.json, report, file);
  return { json: paths.json, csv: paths.csv, ...(wroteErrors ? { errors: paths.errors } : {}) };
}
