import { changedSince } from './job-changes.js';
import type { ResultReport } from './model.js';

/**
 * At most this many bytes of one report file are kept between writes. Only the ReportWriter
 * keeps a cache, and only from its first progress write on (a report written once — `check`,
 * `watch`, a `run` whose outcomes all came within the first pause — needs none), so what it
 * bounds is a `run` of a big input: a 1,000-job × 5-line result.json is ~1.5 MB and its
 * result.csv ~0.2 MB, so 16 MB holds ~10,000 such jobs; the batches past it are encoded at each
 * write, as without a cache. Two files, at most 32 MB per report being run.
 */
const CACHE_MAX_BYTES = 16 << 20;

/**
 * Jobs per kept batch, in both files: result.json also stringifies them in one call (big enough
 * to amortise the call, small enough to stay young garbage).
 */
export const BATCH_JOBS = 64;

interface Entry {
  /** The batch's jobs are [from, to); `from` is its place in the list. */
  to: number;
  /** The change clock (job-changes.ts) when the bytes were made. */
  clock: number;
  bytes: Uint8Array;
}

/**
 * One report file's encoded jobs, a batch at a time, kept between writes of that file: a
 * rewrite takes the bytes of every batch none of whose jobs changed since (job-changes.ts) and
 * encodes only the others. What is not a job's (the head, the summary) is encoded every time.
 */
export class EncodedBatches {
  private readonly entries = new Map<number, Entry>();
  private bytes = 0;
  private jobCount = -1;
  private context: string | undefined;
  /** Set for the last write: it takes kept bytes but keeps none of its own (copies for nothing, and garbage). */
  private last = false;
  /** Jobs encoded afresh and jobs whose bytes were reused, in the last write. */
  encoded = 0;
  reused = 0;

  constructor(private readonly maxBytes = CACHE_MAX_BYTES) {}

  /** The next write is the last one: it uses what is kept and keeps nothing more. */
  lastWrite(): void {
    this.last = true;
  }

  /** How many bytes are kept (the cap's tests read it). */
  get keptBytes(): number {
    return this.bytes;
  }

  /** Whether bytes encoded now would be kept (put), so are worth copying. */
  get keeping(): boolean {
    return !this.last;
  }

  /**
   * Starts a write of `report`. `context` is what every job's bytes depend on besides the job
   * (result.csv of a YAML input repeats the file-level errors on every row): when it, or the
   * number of jobs, differs from the last write's, nothing kept is used.
   */
  begin(report: ResultReport, context = ''): void {
    if (report.jobs.length !== this.jobCount || context !== this.context) {
      this.entries.clear();
      this.bytes = 0;
      this.jobCount = report.jobs.length;
      this.context = context;
    }
    this.encoded = 0;
    this.reused = 0;
  }

  /** The bytes of jobs `[from, to)` as last encoded, if none of them changed since. */
  get(report: ResultReport, from: number, to: number): Uint8Array | undefined {
    const e = this.entries.get(from);
    if (e === undefined || e.to !== to || changedSince(report, from, to, e.clock)) {
      this.encoded += to - from;
      return undefined;
    }
    this.reused += to - from;
    return e.bytes;
  }

  /** Keeps the bytes of jobs `[from, to)`, encoded from the jobs as they were at `clock` (or later), while they fit. */
  put(from: number, to: number, clock: number, bytes: Uint8Array): void {
    if (this.last) return;
    const old = this.entries.get(from);
    const size = this.bytes - (old?.bytes.length ?? 0) + bytes.length;
    if (size > this.maxBytes) {
      if (old !== undefined) {
        this.entries.delete(from);
        this.bytes -= old.bytes.length;
      }
      return;
    }
    this.entries.set(from, { to, clock, bytes });
    this.bytes = size;
  }
}

/** The caches of one report's two job lists: result.json and result.csv. */
export interface ReportCache {
  json: EncodedBatches;
  csv: EncodedBatches;
}

export function reportCache(): ReportCache {
  return { json: new EncodedBatches(), csv: new EncodedBatches() };
}
