import { rmSync, type Stats } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { cleanUpOnExit, type ExitCleanUp, stopCleaningUp } from '../core/exit-cleanup.js';
import type { JobList, Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { CsvLimits } from '../manifest/read-input.js';
import { temporaryName, writeFileAtomic } from '../storage/atomic-write.js';
import { reportPaths } from './report-paths.js';
import { rowContextOf } from './row-cells.js';
import type { SpooledReport } from './spooled-report.js';
import { csvInputChunks, csvResultJob, encoderOf, type RowGate, rowsOnDemand } from './write-result-csv.js';

/** Text handed to the file at a time: a write a piece, not a write a job. */
const PIECE_BYTES = 1 << 16;
/**
 * Jobs ended past the one a record waits for before the writer goes on: fewer than the spool
 * keeps of the jobs it serialised last (its cache), so that they are read from there, not parsed.
 */
const WAKE_JOBS = 32;

/**
 * A run's final result.csv of a CSV input, written along with the jobs rather than all at the
 * end: each record once the job it shows has ended (a job's result never changes after), to a
 * temporary beside the reports, so that when the last answer comes only the last records are
 * left: the time from a big run's last answer to its exit was mostly result.csv's (`npm run bench
 * -- --jobs 10000 --latency 5 --trace`). A job is mostly read while the spool still holds it,
 * not parsed back. It stands for the file written at the end (writeResultCsv of the same
 * report, byte for byte) only when what it was made of is as it was: the input's file (its
 * identity, size and times; its bytes are hashed as they are read), the report's file-level
 * errors and skipped rows, and every job ended; otherwise it is removed and result.csv is
 * written at the end as ever.
 */
export class FinalResultCsv {
  private readonly written: Promise<boolean>;
  private readonly leftover: ExitCleanUp;
  private stop: (err: Error) => void = () => undefined;
  private readonly stopped = new Promise<never>((_, reject) => {
    this.stop = reject;
  });

  private constructor(
    readonly path: string,
    private readonly spooled: SpooledReport,
    private readonly context: { atStart: string; now: () => string },
    private readonly inputSeen: Stats,
    opts: { manifest: Manifest<JobList>; mapping?: Mapping; csvLimits?: Partial<CsvLimits> },
  ) {
    this.stopped.catch(() => undefined);
    this.leftover = { cleanUp: () => rmSync(path, { force: true }) };
    cleanUpOnExit(this.leftover);
    const report = spooled.report;
    // Read only once ended (the gate): a job's result as the spool holds it, or parsed back.
    const jobAt = (j: number) => spooled.jobAt(j);
    const job = csvResultJob(path, report, { ...opts, jobsNow: jobAt });
    const results = rowsOnDemand(report, opts, job.output.delimiter, encoderOf(job.output), jobAt);
    const { spool } = spooled;
    const gate: RowGate = {
      ready: (row) => {
        const j = results.jobOfRow(row);
        return j < 0 || spool.statusOf(j) !== undefined;
      },
      // Many jobs at a time: a wake for each job's end would cost the event loop more than its rows.
      until: (row) => {
        const upTo = Math.min(results.jobOfRow(row) + WAKE_JOBS, spool.jobCount);
        return Promise.race([spool.whenEndedBefore(upTo), this.stopped]);
      },
      pieceBytes: PIECE_BYTES,
    };
    this.written = writeFileAtomic(path, csvInputChunks(job, results, gate), { staged: true }).then(
      () => true,
      () => false,
    );
  }

  /**
   * Begins result.csv of `spooled`'s report beside its input, when the input is a CSV file the
   * run reads again for it; undefined otherwise.
   */
  static async start(
    spooled: SpooledReport,
    opts: { manifest?: Manifest<JobList>; mapping?: Mapping; csvLimits?: Partial<CsvLimits> },
  ): Promise<FinalResultCsv | undefined> {
    const { report } = spooled;
    const { manifest } = opts;
    if (report.input.format !== 'csv' || manifest === undefined || !report.input.sha256) return undefined;
    const inputSeen = await stat(report.input.file).catch(() => undefined);
    if (inputSeen === undefined) return undefined;
    const context = () => rowContextOf(report, manifest.jobs.length);
    const path = temporaryName(reportPaths(report.input.file).csv);
    return new FinalResultCsv(path, spooled, memo(context), inputSeen, { ...opts, manifest });
  }

  /**
   * Once every job has ended: renames the finished file to `to` and answers true when it stands
   * for result.csv written now; otherwise removes it and answers false.
   */
  async moveTo(to: string): Promise<boolean> {
    try {
      if (!this.spooled.spool.allEnded) this.stop(new Error('not every job has ended'));
      const done = await this.written;
      const same = done && this.context.now() === this.context.atStart && (await this.sameInput());
      if (same) await rename(this.path, to);
      return same;
    } finally {
      await rm(this.path, { force: true });
      stopCleaningUp(this.leftover);
    }
  }

  /** Stops the writing and removes the file. */
  async abandon(): Promise<void> {
    this.stop(new Error('abandoned'));
    await this.written;
    await rm(this.path, { force: true });
    stopCleaningUp(this.leftover);
  }

  private async sameInput(): Promise<boolean> {
    const now = await stat(this.spooled.report.input.file).catch(() => undefined);
    const was = this.inputSeen;
    return (
      now !== undefined &&
      now.dev === was.dev &&
      now.ino === was.ino &&
      now.size === was.size &&
      now.mtimeMs === was.mtimeMs &&
      now.ctimeMs === was.ctimeMs
    );
  }
}

/** `of` as it was first (`atStart`), and as it is now. */
function memo(of: () => string): { atStart: string; now: () => string } {
  return { atStart: of(), now: of };
}
