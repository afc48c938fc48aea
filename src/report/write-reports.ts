import { rmSync } from 'node:fs';
import { lstat, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { JobList, Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { CsvLimits } from '../manifest/read-input.js';
import { cleanUpOnExit, type ExitCleanUp, stopCleaningUp } from '../core/exit-cleanup.js';
import type { Logger } from '../core/log/logger.js';
import { type NewFileOptions, temporaryName, temporaryOf } from '../storage/atomic-write.js';
import { stickyStops } from '../storage/sticky-claims.js';
import { removeStraysOf } from '../storage/stray-temporaries.js';
import { reportHasErrors } from './build-report.js';
import type { ResultReport } from './model.js';
import { reportPaths, type ReportPaths } from './report-paths.js';
import { writeSpooledErrors, writeSpooledJson } from './report-spool.js';
import type { SpooledReport } from './spooled-report.js';
import { writeErrorsTxt } from './write-errors-txt.js';
import { type ResultCsvOptions, writeResultCsv } from './write-result-csv.js';
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
 * What to tell of a file-system failure (an error with a system error code) while an input's
 * reports are begun or written beside it — a folder the user may not write, a read-only mount, a
 * full disk, a folder where a report would go: the input is then not processed, as one that
 * cannot be read is (exit 2, named on stderr). Undefined for any other error, which stays an
 * internal error.
 */
export function reportsUnwritable(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)
    ? `its reports cannot be written beside it (${code})`
    : undefined;
}

/**
 * What to tell of a file-system failure of an input's final reports, written once its jobs ran
 * (a disk full, a quota, a read-only remount, a folder made at a report's name meanwhile): the
 * report and the cause, and that nothing is lost (exit 3: run again). `sent`: orders may have
 * been sent (`run`), which the ledger holds, so the next run only writes the reports. Undefined
 * for any other error, which stays an internal error.
 */
export function reportsNotWritten(err: unknown, sent: boolean): string | undefined {
  if (reportsUnwritable(err) === undefined) return undefined;
  const e = err as NodeJS.ErrnoException & { dest?: string };
  const cause = e.message.split(',')[0];
  const next = sent
    ? 'the orders sent are recorded in the ledger: running it again writes the reports and sends nothing twice'
    : 'nothing was sent: running it again writes the reports';
  return `its report ${reportNamed(e)} could not be written (${cause}); ${next}`;
}

/** The report a failed write was of: a rename's target, or the report of a temporary's name. */
function reportNamed(e: NodeJS.ErrnoException & { dest?: string }): string {
  if (e.dest !== undefined) return e.dest;
  if (e.path === undefined) return 'file';
  const of = temporaryOf(basename(e.path));
  return of === undefined ? e.path : join(dirname(e.path), of.target);
}

/**
 * Why the reports at `paths` could not be put in place, looked at before anything of the input
 * is sent: each report is renamed over what is at its name, and a folder there refuses it, as
 * does, in a sticky folder (/tmp, a shared drop), a file another user owns. A symbolic link or
 * a FIFO there is replaced, never followed. Undefined when nothing stands in the way.
 */
export async function reportsBlocked(paths: ReportPaths): Promise<string | undefined> {
  for (const path of [paths.json, paths.csv, paths.errors]) {
    const at = await lstat(path).catch(() => undefined);
    if (at === undefined) continue;
    if (at.isDirectory())
      return `its report ${path} is a folder, which the report cannot replace: move or remove it first`;
    const folder = await lstat(dirname(path)).catch(() => undefined);
    if (folder !== undefined && stickyStops(at, folder))
      return (
        `its report ${path} belongs to uid ${at.uid}, and the folder is sticky (chmod +t): only that user ` +
        "or the folder's owner may replace it: have them remove it first"
      );
  }
  return undefined;
}

/**
 * Writes the three reports, each atomically: result.json, result.csv, and errors.txt when
 * something failed. Next to the input by default, where a stale errors.txt is removed when
 * nothing failed (safe to call again after every job outcome), and so are the temporaries
 * of these three names that an earlier write killed midway left there (removeStraysOf); or
 * to `target` (whose store removes those of its folders: FolderSource.stage).
 *
 * Each is written to a temporary name beside it and fsynced; then result.csv and errors.txt
 * are renamed into place before result.json, so a reader who sees the new result.json finds
 * the others of the same write. result.csv and errors.txt read the input (a CSV's own cells)
 * and name it (errors.txt's lines) as `report.input.file` says before result.json is written,
 * which then becomes `target.inputShownAs`, and stays so. result.csv is written while
 * result.json is (a big CSV input's by a worker thread, write-result-csv.ts); nothing is renamed
 * until all three are written, and a failure of any leaves none of them (nor a temporary file).
 */
export async function writeReports(
  report: ResultReport,
  opts: {
    manifest?: Manifest<JobList>;
    mapping?: Mapping;
    csvLimits?: Partial<CsvLimits>;
    target?: ReportTarget;
    /** Whether a worker thread writes result.csv (ResultCsvOptions.worker): by default by the input's size. */
    worker?: boolean;
    /** Told at debug level what stray temporary could not be removed. */
    logger?: Pick<Logger, 'debug'>;
    /**
     * The report's jobs are in this spool (`report` is its `report`): result.json, result.csv
     * and errors.txt are assembled from one snapshot of it, each running job rendered as
     * written, and the report's summary becomes the snapshot's.
     */
    spooled?: SpooledReport;
    /** Write the reports' chunks on this thread (NewFileOptions.onThisThread): a command with nothing else to do. */
    onThisThread?: boolean;
  } = {},
): Promise<WrittenReports> {
  const { target, logger, spooled, onThisThread, ...csvOpts } = opts;
  const paths = target?.paths ?? reportPaths(report.input.file);
  if (!target) await removeStraysOf(Object.values(paths), logger);
  // `staged`: the caller renames the files itself (paths are its temporary names).
  const staged = target?.file?.staged === true;
  const file: NewFileOptions = { ...target?.file, staged: true, ...(onThisThread ? { onThisThread } : {}) };
  const tmp: ReportPaths = staged
    ? paths
    : { json: temporaryName(paths.json), csv: temporaryName(paths.csv), errors: temporaryName(paths.errors) };
  // A signal or an exit midway removes the temporaries at once, not a later write an hour on
  // (removeStraysOf). Staged names are the caller's to rename, and to tidy.
  const leftovers = staged ? undefined : temporariesOf(tmp);
  if (leftovers) cleanUpOnExit(leftovers);
  try {
    const wroteErrors = await writeTemporaries(report, tmp, { csvOpts, spooled, target, file });
    if (!staged) await renameIntoPlace(tmp, paths, wroteErrors, target === undefined);
    return { json: paths.json, csv: paths.csv, ...(wroteErrors ? { errors: paths.errors } : {}) };
  } finally {
    if (leftovers) stopCleaningUp(leftovers);
  }
}

/** The three temporaries, removed by name when the process ends before they are renamed. */
function temporariesOf(tmp: ReportPaths): ExitCleanUp {
  return {
    cleanUp: () => {
      for (const t of [tmp.csv, tmp.errors, tmp.json]) rmSync(t, { force: true });
    },
  };
}

/**
 * Writes the reports to their temporary names `tmp` (all or none of them: a failure removes
 * those written); returns whether errors.txt was written.
 */
async function writeTemporaries(
  report: ResultReport,
  tmp: ReportPaths,
  opts: {
    csvOpts: Omit<ResultCsvOptions, 'input' | 'file' | 'jobsNow'>;
    spooled: SpooledReport | undefined;
    target: ReportTarget | undefined;
    file: NewFileOptions;
  },
): Promise<boolean> {
  const { csvOpts, spooled, target, file } = opts;
  const input = report.input.file;
  let csv: Promise<void> | undefined;
  let wroteErrors = false;
  let written = false;
  try {
    // A spooled report's three files and its summary are of one snapshot of it.
    const snap = spooled?.snapshot();
    const jobsNow = snap && spooled?.jobsNow(snap);
    csv = writeResultCsv(tmp.csv, report, { ...csvOpts, input, file, ...(jobsNow ? { jobsNow } : {}) });
    if (spooled === undefined || snap === undefined) {
      if (reportHasErrors(report)) wroteErrors = await writeErrorsTxt(tmp.errors, report, file);
      if (target) report.input.file = target.inputShownAs;
      await writeResultJson(tmp.json, report, file);
    } else {
      if (spooled.hasErrors()) wroteErrors = await writeSpooledErrors(tmp.errors, report, spooled.spool, snap, file);
      if (target) report.input.file = target.inputShownAs;
      await writeSpooledJson(tmp.json, report, spooled.spool, snap, file);
    }
    await csv;
    written = true;
  } finally {
    if (!written) {
      await csv?.catch(() => undefined); // result.csv's file is complete or gone before it is removed
      await Promise.all([tmp.csv, tmp.errors, tmp.json].map((t) => rm(t, { force: true })));
    }
  }
  return wroteErrors;
}

/**
 * Renames the written temporaries over the reports, result.json last; beside the input
 * (`besideInput`) a stale errors.txt goes when none was written. A failure removes the temporaries.
 */
async function renameIntoPlace(tmp: ReportPaths, paths: ReportPaths, wroteErrors: boolean, besideInput: boolean) {
  try {
    await rename(tmp.csv, paths.csv);
    if (wroteErrors) await rename(tmp.errors, paths.errors);
    else if (besideInput) await rm(paths.errors, { force: true });
    await rename(tmp.json, paths.json);
  } catch (err) {
    await Promise.all([tmp.csv, tmp.errors, tmp.json].map((t) => rm(t, { force: true })));
    throw err;
  }
}
