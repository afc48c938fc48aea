import type { Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { CsvLimits } from '../manifest/read-input.js';
import { refreshSummary } from './build-report.js';
import type { ResultReport } from './model.js';
import { writeReports, type WrittenReports } from './write-reports.js';

/**
 * Rewrites an input's reports as job outcomes arrive, coalescing: while one write is on disk
 * (or within the pause after the last one) further outcomes only mark the report dirty, and
 * one more write follows that includes them all. The pause is `intervalMs` (1 s), or ten
 * times as long as the last write took if that is longer: a manifest of thousands of jobs
 * (each rewrite re-reads a CSV input for result.csv) then spends at most about a tenth of its
 * time rewriting reports, and a small one sees every outcome on disk within a second. Each
 * file is replaced atomically.
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
  /** Ends the current pause early (the final flush must not wait out a throttle pause). */
  private wake: (() => void) | undefined;

  constructor(
    private readonly report: ResultReport,
    private readonly opts: {
      manifest?: Manifest;
      mapping?: Mapping;
      csvLimits?: Partial<CsvLimits>;
      intervalMs?: number;
    },
  ) {}

  /** Asks for a write that includes the report as it is now. */
  schedule(): void {
    this.dirty = true;
    this.writing ??= this.loop();
  }

  /** Writes the final state at once and reports where the files are; throws if any write failed. */
  async flush(): Promise<WrittenReports> {
    // One more write with the report as it is now: a loop that is pausing is woken and writes
    // at once; one that is mid-write goes round once more; otherwise a loop starts.
    this.final = true;
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
        const pause = Math.max(this.opts.intervalMs ?? 1000, 10 * this.lastTook);
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
        refreshSummary(this.report);
        this.last = await writeReports(this.report, this.opts);
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
