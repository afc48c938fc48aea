import { isError } from '../manifest/diagnostics.js';
import { itemIndexOf } from '../manifest/field-path.js';
import type { JobList, Manifest } from '../manifest/model.js';
import { type CheckedReport, toReportError } from '../report/build-report.js';
import { itemCount, refilePending } from '../report/lazy-items.js';
import type { JobResult, ReportError, ResultReport } from '../report/model.js';
import type { PendingSource, ReportSpool } from '../report/report-spool.js';
import { dueOf, type JobState } from './job-state.js';
import { jobStatus } from './job-status.js';

/**
 * The report written from the job states over a whole report held in memory: check's report
 * (built by buildReport) with every job written over it from its state (one that check refused
 * has nothing to add); each write puts the stages' part afresh on top of what check found, so
 * writing twice files nothing twice. A run uses JobReporter below, which holds no result per
 * job; this plain path is what its tests hold it to, byte for byte
 * (test/report/report-on-demand.test.ts, report-rewrites.test.ts).
 */
export function jobReporter(report: ResultReport, manifest: Manifest<JobList>): (job: JobState) => void {
  // Check's findings on each job, kept at the first write (before anything was written over them).
  const checked = new Map<number, Checked>();
  return (job) => {
    let check = checked.get(job.index);
    if (check === undefined) {
      const result = report.jobs[job.index];
      check = { warnings: result.warnings, errors: result.errors, dateDue: result.dateDue };
      checked.set(job.index, check);
    }
    writeJob(report.jobs[job.index], job, check, manifest);
  };
}

/**
 * The report of a run written from its job states without a result held per job: a job's
 * result is made when it is written, from check's findings on it, the manifest's job and the
 * job's latest state, written over check's as jobReporter does. A job that has not ended keeps
 * only a reference to its latest state (`write`); one that has ended (`end`: its last write) is
 * handed to the spool, which keeps it on disk, and its state is let go.
 */
export class JobReporter {
  /** Per job: its latest state while it has been written and has not ended. */
  private readonly states: Array<JobState | undefined>;
  /** What a write renders a job that has not ended from: its latest state, taken when the write begins. */
  readonly pending: PendingSource = {
    at: (j) => this.states[j],
    render: (j, at) => this.render(j, at as JobState | undefined),
  };

  constructor(
    private readonly checked: Pick<CheckedReport, 'job' | 'jobCount' | 'forget'>,
    private readonly manifest: Manifest<JobList>,
    private spool?: ReportSpool,
  ) {
    this.states = new Array<JobState | undefined>(checked.jobCount);
  }

  /** The spool ended jobs go to (the report's, made after the reporter it renders from). */
  spoolTo(spool: ReportSpool): void {
    this.spool = spool;
  }

  /** A write of a job that goes on: the report shows it from this state until the next. */
  write(job: JobState): void {
    this.states[job.index] = job;
  }

  /**
   * A job's last write: its result goes to the spool, its state is let go. False when the
   * spool asks its caller to wait for the disk (ReportSpool.end) before ending more.
   */
  end(job: JobState): boolean {
    if (this.spool === undefined) throw new Error('the report has no spool to end jobs in');
    this.states[job.index] = undefined;
    const result = this.render(job.index, job);
    // Its items built now: a job's items not yet built read their status from what the report's
    // items share per job, which a write under way rendering this job from an earlier state sets anew.
    void result.items;
    return this.spool.end(job.index, result);
  }

  /**
   * end() of a job check refused, before any write of the report has begun (a write renders the
   * jobs that had not ended when it began from check's findings): check's findings on it are let
   * go with its state, so an input of many invalid jobs holds none of them.
   */
  endChecked(job: JobState): boolean {
    const more = this.end(job);
    this.checked.forget(job.index);
    return more;
  }

  /** Job `j`'s result: check's, written over from `state` when it has one. */
  render(j: number, state: JobState | undefined): JobResult {
    const result = this.checked.job(j, state?.orderNumber);
    if (state !== undefined)
      writeJob(
        result,
        state,
        { warnings: result.warnings, errors: result.errors, dateDue: result.dateDue },
        this.manifest,
      );
    return result;
  }
}

interface Checked {
  warnings: readonly ReportError[];
  errors: readonly ReportError[];
  dateDue: string | null;
}

function writeJob(result: JobResult, job: JobState, check: Checked, manifest: Manifest<JobList>): void {
  const status = jobStatus(job.outcome);
  const entry = job.ledger?.entry;
  result.status = status;
  result.jobNumber = entry?.jobNumber ?? null;
  result.dateDue = entry?.dateDue || (job.resolved && dueOf(job.resolved)) || check.dateDue;
  result.totalJobCost = entry?.totalJobCost ?? null;
  result.estimatedCost = job.resolved?.estimate.total ?? null;
  // A job the ledger vouched for has no resolution: its cost is in the account's currency all the same.
  const currency = job.resolved?.estimate.currency ?? job.ledger?.currency;
  if (currency !== undefined) result.currency = currency;

  // Warnings go on the job; an error on an item's field goes on that item, any other on the job.
  const warnings = [...check.warnings];
  const errors = [...check.errors];
  const itemErrors = new Map<number, ReportError[]>();
  const items = itemCount(result);
  for (const d of job.diagnostics) {
    const error = toReportError(d, manifest.file);
    const k = itemIndexOf(d.field)?.[1];
    if (!isError(d)) warnings.push(error);
    else if (k === undefined || k >= items) errors.push(error);
    else itemErrors.set(k, [...(itemErrors.get(k) ?? []), error]);
  }
  result.warnings = warnings;
  result.errors = errors;

  // Items are built only when something is written on them (lazy-items.ts): an item keeps the
  // status its job had at check until the ledger's outcome or an error of its own says otherwise.
  // Check filed no item errors on a job that entered the stages (it would have refused it).
  const ledger = job.ledger;
  if (itemErrors.size === 0 && ledger === undefined) return;
  if (itemErrors.size === 0 && ledger && refilePending(result, jobStatus(ledger.outcome), ledger.entry?.lines)) return;
  result.items.forEach((item, k) => {
    // The API adds lines in the order supplied, so line k of the response is item k.
    const line = ledger?.entry?.lines?.[k];
    if (line) {
      item.newAssetSku = line.newAssetSku;
      item.needsArtworkToBeUploaded = line.needsArtworkToBeUploaded;
    }
    const own = itemErrors.get(k);
    if (own) {
      item.errors = own;
      item.status = 'invalid';
    } else if (ledger) item.status = jobStatus(ledger.outcome);
  });
}
