import { summaryHasErrors } from './build-report.js';
import type { JobResult, ReportSummary, ResultReport } from './model.js';
import type { ReportPaths } from './report-paths.js';
import { glanceThrough } from './job-glance.js';
import { type PendingSource, ReportSpool, type Snapshot } from './report-spool.js';
import { type ReportQuotes, quotesOf } from './write-errors-txt.js';

/**
 * A run's report that holds no result per job: an ended job's result is in the spool (on disk,
 * read back when asked), a running one's is rendered from what it is made of whenever it is
 * written (`pending`: check's findings, the manifest's job, the job's latest state). `report`
 * is the report's head with a read-only `jobs` that finds each job so, for what reads a
 * report (result.csv's rows); result.json and errors.txt are assembled from the spool.
 */
export class SpooledReport {
  /** The report: its head, and `jobs` read on demand (each read makes or reads the job anew). */
  readonly report: ResultReport;
  private closing: Promise<void> | undefined;

  private constructor(
    head: Omit<ResultReport, 'jobs'>,
    readonly spool: ReportSpool,
    readonly pending: PendingSource,
  ) {
    const jobs = jobsView(spool.jobCount, (j) => this.jobAt(j));
    glanceThrough(jobs, (j) => spool.glance(j));
    this.report = Object.assign(head, { jobs });
  }

  /**
   * A report of `jobCount` jobs whose spool's temporary files go beside `paths` (the reports
   * of the file the input was read from: watch's private copy, never the drop folder).
   */
  static async create(
    head: Omit<ResultReport, 'jobs'>,
    jobCount: number,
    pending: PendingSource,
    paths: Pick<ReportPaths, 'json' | 'errors'>,
  ): Promise<SpooledReport> {
    return new SpooledReport(head, await ReportSpool.create(paths, jobCount, head.input.file), pending);
  }

  /** Job `j` as the report shows it now. */
  jobAt(j: number): JobResult {
    return this.spool.resultOf(j) ?? this.pending.render(j, this.pending.at(j));
  }

  /**
   * The report's jobs as `snap` (or a snapshot taken now) shows them, each read when asked:
   * ended ones from the spool, running ones rendered from the state they had then. What a write
   * that takes a while shows of every row (result.csv), as result.json does of the same
   * snapshot, without holding a result per job.
   */
  jobsNow(snap: Snapshot = this.spool.snapshot(this.report, this.pending)): (j: number) => JobResult | undefined {
    const { spool } = this;
    return (j) => {
      if (!(j >= 0 && j < spool.jobCount)) return undefined;
      return j < snap.from ? spool.resultOf(j) : snap.job(j);
    };
  }

  /**
   * What one write of the reports shows (ReportSpool.snapshot), its summary made the report's:
   * result.json, result.csv (jobsNow), errors.txt and whether there is one are of one moment.
   */
  snapshot(): Snapshot {
    const snap = this.spool.snapshot(this.report, this.pending);
    this.report.summary = snap.summary;
    return snap;
  }

  /** Sets the report's summary from the spool's counts and the running jobs. */
  refreshSummary(): ReportSummary {
    this.report.summary = this.spool.summary(this.report, this.pending);
    return this.report.summary;
  }

  /** Whether the report, as its summary last said, shows a failure of any kind (reportHasErrors). */
  hasErrors(): boolean {
    return summaryHasErrors(this.report.summary);
  }

  /**
   * What an alert quotes of the report (firstErrors, heldReasons), taken once every job has
   * ended: the jobs with errors, and those awaiting approval, read back in turn.
   */
  quotes(): ReportQuotes {
    const { spool } = this;
    const n = spool.jobCount;
    const jobAt = (j: number) => this.jobAt(j);
    const withErrors = function* () {
      for (let j = 0; j < n; j++) if (spool.hasErrors(j) || spool.statusOf(j) === undefined) yield jobAt(j);
    };
    const held = function* () {
      for (let j = 0; j < n; j++) {
        const status = spool.statusOf(j);
        if (status === 'awaiting-approval' || status === undefined) yield jobAt(j);
      }
    };
    return quotesOf(this.report, withErrors(), held());
  }

  /**
   * Removes the spool's files (the first call; every path of a run ends here). With
   * `keepJobs` (`--json` and `plan --out` list the jobs) `report.jobs` becomes a plain array of
   * every job first; otherwise the jobs are let go, and reading one throws.
   */
  close(keepJobs = false): Promise<void> {
    if (this.closing === undefined) {
      const n = this.spool.jobCount;
      let kept: JobResult[] | undefined;
      try {
        kept = keepJobs ? Array.from({ length: n }, (_, j) => this.jobAt(j)) : undefined;
      } finally {
        const file = this.report.input.file;
        this.report.jobs =
          kept ??
          jobsView(n, () => {
            throw new Error(`the jobs of the report of ${file} are no longer held`);
          });
        this.closing = this.spool.close();
      }
    }
    return this.closing;
  }
}

/**
 * `count` jobs as a read-only array: each index read is `jobAt(index)`, so what reads a
 * report's jobs (array methods, iteration, indexing) reads them one at a time, holding none.
 */
function jobsView(count: number, jobAt: (j: number) => JobResult): JobResult[] {
  const indexOf = (key: string | symbol): number | undefined => {
    if (typeof key !== 'string') return undefined;
    const j = Number(key);
    return Number.isInteger(j) && j >= 0 && String(j) === key ? j : undefined;
  };
  return new Proxy([] as JobResult[], {
    get(target, key, receiver) {
      if (key === 'length') return count;
      const j = indexOf(key);
      if (j !== undefined) return j < count ? jobAt(j) : undefined;
      return Reflect.get(target, key, receiver);
    },
    has(target, key) {
      const j = indexOf(key);
      return j !== undefined ? j < count : Reflect.has(target, key);
    },
    set() {
      throw new TypeError("a spooled report's jobs are read-only");
    },
  });
}
