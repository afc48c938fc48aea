import type { Logger } from '../core/log/logger.js';
import type { JobList, Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { CsvLimits } from '../manifest/read-input.js';
import { refreshSummary } from './build-report.js';
import type { ResultReport } from './model.js';
import type { SpooledReport } from './spooled-report.js';
import { type ReportTarget, type WrittenReports, writeReports } from './write-reports.js';

/**
 * The pause after a progress write, in multiples of the time that write took: a write renders
 * every job so far on the event loop, which the API's answers then wait behind, so a run of many
 * jobs gives its reports about a thirtieth of its time. Before the first write, the time reading
 * the input took stands in for it: a write reads the input again and renders every job.
 */
const PAUSE_PER_WRITE = 30;

/**
 * Rewrites an input's reports as job outcomes arrive, coalescing: while one write is on disk
 * (or within the pause after the last one) further outcomes only mark the report dirty, and
 * one more write follows that includes them all. The pause is `intervalMs` (1 s), or
 * PAUSE_PER_WRITE times as long as the last write took if that is longer: a manifest of
 * thousands of jobs (each rewrite re-reads a CSV input for result.csv) then spends a small share
 * of its time rewriting reports, and a small one sees every outcome on disk within a second. The
 * first write also waits a pause after the first outcome, as long as PAUSE_PER_WRITE times what
 * reading the input took if that is longer (`readTook`: a big input's first write would otherwise
 * render every job still to be sent while the API's answers wait), so an input whose outcomes all
 * arrive within it is written once, by flush(). Each file is replaced atomically.
 * With `progress: false` nothing is written before flush() (`watch`: the reports are written
 * once, where the input ends up; a progress write would go to its private copy's folder,
 * where nobody sees it).
 * The ledger, not the report, is the durable record of what was submitted: it is written
 * before and after every POST, and a re-run after a crash rebuilds the report from it.
 */
export class ReportWriter {
  private writing: Promise<void> | undefined;
  private dirty = false;
  private failure: unknown;
  private last: WrittenReports | undefined;
  private lastAt = 0;
  private lastTook = 0;
  private final = false;
  private target: ReportTarget | undefined;
  /** Ends the current pause early (the final flush must not wait out a throttle pause). */
  private wake: (() => void) | undefined;

  constructor(
    private readonly report: ResultReport,
    private readonly opts: {
      manifest?: Manifest<JobList>;
      mapping?: Mapping;
      csvLimits?: Partial<CsvLimits>;
      intervalMs?: number;
      /** How long reading and checking the input took, in ms: what the first write's pause is scaled by. */
      readTook?: number;
      /** False: no write before flush() (default true). */
      progress?: boolean;
      /** The report's jobs are in this spool and rendered when written (`report` is its `report`). */
      spooled?: SpooledReport;
      /** Told at debug level what stray temporary could not be removed. */
      logger?: Pick<Logger, 'debug'>;
    },
  ) {}

  /** Asks for a write that includes the report as it is now. */
  schedule(): void {
    if (this.opts.progress === false && !this.final) return;
    // The first outcome starts the first pause: outcomes that follow within it share one write.
    if (this.lastAt === 0) this.lastAt = Date.now();
    this.dirty = true;
    this.writing ??= this.loop();
  }

  /**
   * Writes the final state at once (to `target`, or next to the input) and reports where the
   * files are; throws if any write failed. After a flush to a target, nothing more is written.
   */
  async flush(target?: ReportTarget): Promise<WrittenReports> {
    // One more write with the report as it is now: a loop that is pausing is woken and writes
    // at once; one that is mid-write goes round once more; otherwise a loop starts.
    this.final = true;
    this.target = target;
    this.schedule();
    this.wake?.();
    await this.writing;
    if (this.failure) throw this.failure;
    // The loop wrote at least once (it always does when dirty) or recorded why not.
    if (this.last === undefined) throw new Error(`the reports of ${this.report.input.file} were not written`);
    return this.last;
  }

  private async loop(): Promise<void> {
    try {
      while (this.dirty) {
        const took = this.last === undefined ? (this.opts.readTook ?? 0) : this.lastTook;
        const pause = Math.max(this.opts.intervalMs ?? 1000, PAUSE_PER_WRITE * took);
        const wait = this.lastAt + pause - Date.now();
        if (!this.final && wait > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, wait);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          this.wake = undefined;
        }
        this.dirty = false;
        const started = Date.now();
        // A spooled report's summary comes with the snapshot its write takes (writeReports).
        if (!this.opts.spooled) refreshSummary(this.report);
        // The final write goes to the target; a progress write still under way goes next to the
        // input, and the loop goes round once more for the final one.
        const target = this.final ? this.target : undefined;
        // result.csv is written on this thread, never handed to a worker thread (as check's is):
        // each thread leaves the allocator an arena of its own, which a run's RSS keeps, and a
        // run's report writes are a small part of its time, where check's are all of it.
        this.last = await writeReports(this.report, { ...this.opts, worker: false, ...(target ? { target } : {}) });
        this.lastAt = Date.now();
        this.lastTook = this.lastAt - started;
      }
    } catch (err) {
      this.failure ??= err;
    } finally {
      this.writing = undefined;
    }
  }
}
