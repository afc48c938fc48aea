/**
 * A big template CSV's jobs as a JobList (model.ts) that holds only a few windows of them: a
 * job asked for is served from the window holding it, and a window not held is read again from
 * the file, synchronously (job-index.ts, openJobsSync: positioned reads through the descriptor
 * whose file was proven the one indexed), so every synchronous consumer of `Manifest.jobs`
 * works unchanged. Each window read again goes through the local rules that repair values (a
 * ZIP's lost zero) as the whole read's jobs did. A file that changed throws CsvFileChanged to
 * whoever asked: the job is not used.
 *
 * Its SourceMap and its CsvOrigin's item rows are served from the index and the windows too.
 */
import type { JobList, ManifestJob, SourceLocation, SourceMap } from '../model.js';
import { CsvFileChanged, type CsvJobIndex, type JobReaderSync, type JobWindow, openJobsSync } from './job-index.js';
import type { ItemRows } from './item-rows.js';
import type { StringColumn } from '../../core/string-column.js';

/**
 * Jobs a window holds: a few hundred jobs cost some 150 KB each, and a window's read costs a
 * scanner, a builder and a schema pass whose fixed part a few hundred jobs share.
 */
export const WINDOW_JOBS = 256;
/**
 * Windows held: the pipeline works on up to four times its concurrency's jobs at once (at most
 * 1,024: four windows), near one another in the file, and the ones they straddle.
 */
const WINDOWS_HELD = 6;

const JOB_PATH = /^jobs\[(\d+)\]/;

export class JobView implements JobList {
  private readonly held = new Map<number, JobWindow>();
  private reader: JobReaderSync | undefined;
  private closed = false;
  /** The whole read's SourceMap: a job's path from its window, any other path at the header. */
  readonly sources: SourceMap;
  /** The rows of each job's items, from the index's tables (no window read). */
  readonly itemRows: ItemRows;
  /** Each job's order number, as the index noted it (no window read). */
  readonly orderNumbers: StringColumn | undefined;

  constructor(
    private readonly index: CsvJobIndex,
    /** What a window's jobs go through once read (the repairing rules), in job order. */
    private readonly prepare: (jobs: readonly ManifestJob[], from: number) => void,
    private readonly windowJobs = WINDOW_JOBS,
  ) {
    const locate = (path: string) => this.locate(path);
    this.sources = { locate, locateKey: locate };
    this.itemRows = indexItemRows(index);
    this.orderNumbers = index.orderNumbers;
  }

  get length(): number {
    return this.index.jobCount;
  }

  at(i: number): ManifestJob | undefined {
    if (!Number.isInteger(i) || i < 0 || i >= this.index.jobCount) return undefined;
    const w = this.windowOf(i);
    return w.jobs[i - w.from];
  }

  *[Symbol.iterator](): Iterator<ManifestJob> {
    for (let i = 0; i < this.index.jobCount; i++) yield this.at(i) as ManifestJob;
  }

  /**
   * Lets the file go: its descriptor is closed. A window asked for after this (a report written
   * later, watch's) is read through a descriptor opened, proven and closed for that one read.
   */
  close(): void {
    this.closed = true;
    const reader = this.reader;
    this.reader = undefined;
    reader?.close();
  }

  private locate(path: string): SourceLocation {
    const m = JOB_PATH.exec(path);
    const j = m === null ? -1 : Number(m[1]);
    const { file, header } = this.index;
    if (m === null || j >= this.index.jobCount) return header === undefined ? { file } : { file, row: header.row };
    // A job's own location is its first row's, from the index: it needs no read, so a job that
    // failed because its file changed is still placed (flow.ts's notProcessed).
    const first = m[0].length === path.length ? this.itemRows.row(j, 0) : undefined;
    if (first !== undefined) return { file, row: first };
    return this.windowOf(j).sources.locate(path);
  }

  private windowOf(i: number): JobWindow {
    const w = Math.floor(i / this.windowJobs);
    const held = this.held.get(w);
    if (held !== undefined) {
      // Most recently used last: the first one is the one let go.
      this.held.delete(w);
      this.held.set(w, held);
      return held;
    }
    const from = w * this.windowJobs;
    const window = this.read(from, Math.min(from + this.windowJobs, this.index.jobCount));
    this.prepare(window.jobs, from);
    this.held.set(w, window);
    if (this.held.size > WINDOWS_HELD) this.held.delete(this.held.keys().next().value as number);
    return window;
  }

  private read(from: number, to: number): JobWindow {
    if (!this.closed) {
      this.reader ??= openJobsSync(this.index);
      return this.reader.read(from, to);
    }
    const once = openJobsSync(this.index);
    try {
      return once.read(from, to);
    } finally {
      once.close();
    }
  }
}

/** The rows of each job's items (a job's k-th item is its k-th record), from the index's tables. */
function indexItemRows(index: CsvJobIndex): ItemRows {
  const table = index.tables?.records;
  const count = (j: number) => table?.countOf(j) ?? 0;
  const row = (j: number, k: number) => {
    const r = table === undefined || k < 0 ? -1 : table.recordOf(j, k);
    return r < 0 ? undefined : table?.rowOf(r);
  };
  return {
    jobCount: index.jobCount,
    count,
    row,
    toArrays: () =>
      Array.from({ length: index.jobCount }, (_, j) => Array.from({ length: count(j) }, (_, k) => row(j, k) as number)),
  };
}

/**
 * Job `j`, or undefined where its file changed after it was indexed: what a report of the run
 * shows of a job the change stopped (its items are not read from bytes that are not the ones checked).
 */
export function jobIfReadable(jobs: JobList, j: number): ManifestJob | undefined {
  try {
    return jobs.at(j);
  } catch (err) {
    if (err instanceof CsvFileChanged) return undefined;
    throw err;
  }
}
