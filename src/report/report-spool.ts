import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { type NewFileOptions, writeFileAtomic } from '../storage/atomic-write.js';
import { addToSummary, emptySummary } from './build-report.js';
import { JOB_STATUSES, type JobResult, type JobStatus, type ReportSummary, type ResultReport } from './model.js';
import type { ReportPaths } from './report-paths.js';
import { SpoolFile } from './spool-file.js';
import { formatReportError, jobErrors } from './write-errors-txt.js';
import { BATCH_JOBS, batchJson, jobsSeparator, resultJsonHead, resultJsonTail } from './write-result-json.js';

/**
 * A report whose ended jobs live on disk, not in memory. A job's result never changes once the
 * job has ended, so it is written out then: its text in result.json (exactly as
 * resultJsonChunks prints it) to one temporary file beside the reports, its lines of errors.txt
 * to another, in manifest order, and only counts stay in memory (the summary's, and per job its
 * status and whether it has errors). Jobs end out of order within a window: those ahead of the
 * first job still running wait in a small buffer.
 *
 * errors.txt is spooled as its own text rather than kept as error objects or read back out of
 * the JSON spool: a run where one failure holds every other job back gives every job an error,
 * so keeping them would grow with the jobs, and reading them back would mean parsing the whole
 * JSON spool again at every write.
 *
 * The reports are assembled from the spools (writeSpooledJson, writeSpooledErrors) at any
 * time: while jobs run (spooled prefix, then the jobs not spooled yet) and at the end.
 */
export class ReportSpool {
  /** Jobs whose text is queued or on disk: jobs 0 … serialised - 1. */
  private serialised = 0;
  /** Ended, in order, not serialised yet: jobs serialised … next - 1. */
  private ready: JobResult[] = [];
  private next = 0;
  /** Ended ahead of `next`. */
  private readonly waiting = new Map<number, JobResult>();
  /** Text made but not yet on disk (the first entries may be being written), and its length. */
  private queued: Spooled[] = [];
  private queuedChars = 0;
  private writing: Promise<void> | undefined;
  private failure: unknown;
  private closed = false;
  /** Per job: 0 while it runs, else 1 + its status's place in JOB_STATUSES. */
  private readonly statuses: Uint8Array;
  /** Per job: 1 when it ended with an error of its own or of an item. */
  private readonly withErrors: Uint8Array;
  /** The ended jobs' counts (its `jobs` stays 0). */
  private readonly ended = emptySummary();

  private constructor(
    readonly jobCount: number,
    private readonly label: string,
    private readonly json: SpoolFile,
    private readonly errors: SpoolFile,
  ) {
    this.statuses = new Uint8Array(jobCount);
    this.withErrors = new Uint8Array(jobCount);
  }

  /**
   * A spool for a report of `jobCount` jobs whose files are `paths` (the temporary files go
   * beside them), for the input `input` (`report.input.file`: errors.txt names its base name).
   */
  static async create(
    paths: Pick<ReportPaths, 'json' | 'errors'>,
    jobCount: number,
    input: string,
  ): Promise<ReportSpool> {
    const json = await SpoolFile.create(paths.json);
    try {
      return new ReportSpool(jobCount, basename(input), json, await SpoolFile.create(paths.errors));
    } catch (err) {
      await json.remove();
      throw err;
    }
  }

  /**
   * Job `index` has ended with `result`, which nobody changes afterwards. Each job ends once.
   * False when more text waits for the disk than the spool should hold: the caller then waits
   * for `flushed()` before it ends more jobs (the disk is slower than the jobs).
   */
  end(index: number, result: JobResult): boolean {
    if (this.closed) throw new Error('the report spool is closed');
    if (!Number.isInteger(index) || index < 0 || index >= this.jobCount) throw new RangeError(`no job ${index}`);
    if (this.statuses[index] !== 0) throw new Error(`job ${index} has ended already`);
    const status = JOB_STATUSES.indexOf(result.status);
    if (status < 0) throw new Error(`job ${index} ended with an unknown status`);
    this.statuses[index] = status + 1;
    this.withErrors[index] = jobErrors(result).next().done ? 0 : 1;
    addToSummary(this.ended, result);
    if (index !== this.next) {
      this.waiting.set(index, result);
      return this.queuedChars < HIGH_WATER_CHARS;
    }
    this.ready.push(result);
    for (this.next++; this.waiting.has(this.next); this.next++) {
      this.ready.push(this.waiting.get(this.next) as JobResult);
      this.waiting.delete(this.next);
    }
    while (this.ready.length >= BATCH_JOBS || (this.ready.length > 0 && this.next === this.jobCount))
      this.serialise(this.ready.splice(0, BATCH_JOBS));
    return this.queuedChars < HIGH_WATER_CHARS;
  }

  /** Job `index`'s status once it has ended. */
  statusOf(index: number): JobStatus | undefined {
    const code = this.statuses[index];
    return code === undefined || code === 0 ? undefined : JOB_STATUSES[code - 1];
  }

  /** Whether job `index` ended with an error (its own or an item's). */
  hasErrors(index: number): boolean {
    return this.withErrors[index] === 1;
  }

  /** The report's summary, as refreshSummary computes it, with `pending` the jobs that have not ended. */
  summary(head: Pick<ResultReport, 'errors' | 'warnings'>, pending: PendingJobs): ReportSummary {
    return this.snapshot(head, pending).summary;
  }

  /** Resolves once no text waits for the disk (a batch not yet full is still in memory); rejects if a write failed. */
  async flushed(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Waits for the writes under way and removes the temporary files. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await this.writing;
    await Promise.all([this.json.remove(), this.errors.remove()]);
  }

  /**
   * The report as it is now, taken at once (synchronously), so that jobs ending while it is
   * written out do not change it: how much of each spool is on disk, the text queued for them,
   * the ended jobs not serialised yet and the running ones (`pending`), and the summary of all.
   */
  snapshot(head: Pick<ResultReport, 'errors' | 'warnings'>, pending: PendingJobs): Snapshot {
    const s = emptySummary();
    s.jobs = this.jobCount;
    s.items = this.ended.items;
    s.errors = head.errors.length + this.ended.errors;
    s.warnings = head.warnings.length + this.ended.warnings;
    for (const status of JOB_STATUSES) s.byStatus[status] = this.ended.byStatus[status];
    if (this.ended.artworkNeeded !== undefined) s.artworkNeeded = this.ended.artworkNeeded;
    const jobs = [...this.ready];
    for (let i = this.next; i < this.jobCount; i++) {
      let job = this.waiting.get(i);
      if (job === undefined) {
        job = pending(i);
        if (job === undefined) throw new Error(`job ${i} has neither ended nor a pending result`);
        addToSummary(s, job);
      }
      jobs.push(job);
    }
    return {
      jsonBytes: this.json.size,
      errorBytes: this.errors.size,
      queued: [...this.queued],
      from: this.serialised,
      jobs,
      summary: s,
    };
  }

  /** Throws when a spool write failed or a spool file is not where it was made. */
  async verify(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    if (this.closed) throw new Error('the report spool is closed');
    await Promise.all([this.json.verify(), this.errors.verify()]);
  }

  /** result.json's text from the snapshot, `head` first (with the snapshot's summary). */
  async *jsonChunks(snap: Snapshot, head: Omit<ResultReport, 'jobs'>): AsyncGenerator<string | Uint8Array> {
    // A whole report may be passed as the head: its jobs are the spool's to write.
    const { jobs: _jobs, ...rest } = head as Omit<ResultReport, 'jobs'> & { jobs?: unknown };
    yield resultJsonHead({ ...rest, summary: snap.summary });
    yield* this.json.read(snap.jsonBytes);
    for (const q of snap.queued) yield q.json;
    for (let at = 0; at < snap.jobs.length; at += BATCH_JOBS)
      yield jobsSeparator(snap.from + at) + batchJson(snap.jobs.slice(at, at + BATCH_JOBS));
    yield resultJsonTail(this.jobCount);
  }

  /** errors.txt's text from the snapshot, the file-level `errors` first. */
  async *errorChunks(snap: Snapshot, errors: ResultReport['errors']): AsyncGenerator<string | Uint8Array> {
    if (errors.length > 0) yield errors.map((e) => `${formatReportError(e, this.label)}\n`).join('');
    yield* this.errors.read(snap.errorBytes);
    for (const q of snap.queued) if (q.errors !== '') yield q.errors;
    for (const job of snap.jobs) {
      const lines = this.errorText(job);
      if (lines !== '') yield lines;
    }
  }

  private errorText(job: JobResult): string {
    let text = '';
    for (const e of jobErrors(job)) text += `${formatReportError(e, this.label)}\n`;
    return text;
  }

  private serialise(batch: JobResult[]): void {
    const json = jobsSeparator(this.serialised) + batchJson(batch);
    this.serialised += batch.length;
    if (this.failure !== undefined) return; // nothing more is written: every report write fails
    const errors = batch.map((job) => this.errorText(job)).join('');
    this.queued.push({ json, errors });
    this.queuedChars += json.length + errors.length;
    this.writing ??= this.drain();
  }

  /** Appends the queued text to the spools, all that is queued at a time, until none is left. */
  private async drain(): Promise<void> {
    try {
      while (this.queued.length > 0 && this.failure === undefined) {
        const n = this.queued.length;
        const jsonText = this.queued.map((q) => q.json).join('');
        const errorText = this.queued.map((q) => q.errors).join('');
        const json = Buffer.from(jsonText);
        const errors = Buffer.from(errorText);
        await Promise.all([this.json.write(json, this.json.size), this.errors.write(errors, this.errors.size)]);
        // One step: a snapshot sees each text once, queued or on disk.
        this.json.size += json.length;
        this.errors.size += errors.length;
        this.queued = this.queued.slice(n);
        this.queuedChars -= jsonText.length + errorText.length;
      }
    } catch (err) {
      this.failure ??= err;
      this.queued = [];
      this.queuedChars = 0;
      await Promise.all([this.json.remove(), this.errors.remove()]).catch(() => undefined);
    } finally {
      this.writing = undefined;
    }
  }
}

/** Text waiting for the disk past which `end` asks the caller to wait (UTF-16 units, about as many bytes). */
const HIGH_WATER_CHARS = 4 << 20;

/** Job `index`'s result while it has not ended (the caller still holds it). */
export type PendingJobs = (index: number) => JobResult;

interface Spooled {
  json: string;
  errors: string;
}

/** What one write of the reports shows (ReportSpool.snapshot). */
export interface Snapshot {
  jsonBytes: number;
  errorBytes: number;
  queued: readonly Spooled[];
  /** The index of `jobs[0]`. */
  from: number;
  /** The jobs not serialised: ended ones waiting, then running ones. */
  jobs: readonly JobResult[];
  summary: ReportSummary;
}

/**
 * Writes result.json (atomically, writeFileAtomic) as `head`, with the summary of the whole
 * report, then every job: the spooled ones streamed from the spool, then those not spooled yet
 * (`pending` gives each job that has not ended). Byte for byte resultJsonChunks of the same
 * report with its summary refreshed.
 */
export async function writeSpooledJson(
  path: string,
  head: Omit<ResultReport, 'jobs'>,
  spool: ReportSpool,
  pending: PendingJobs,
  file?: NewFileOptions,
): Promise<void> {
  await spool.verify();
  const snap = spool.snapshot(head, pending);
  await writeFileAtomic(path, spool.jsonChunks(snap, head), file);
}

/**
 * Writes errors.txt as writeErrorsTxt does for the same report: every error, file-level first,
 * one line each; when there is none, removes it instead and answers false.
 */
export async function writeSpooledErrors(
  path: string,
  head: Pick<ResultReport, 'errors' | 'warnings'>,
  spool: ReportSpool,
  pending: PendingJobs,
  file?: NewFileOptions,
): Promise<boolean> {
  await spool.verify();
  const chunks = spool.errorChunks(spool.snapshot(head, pending), head.errors);
  const first = await chunks.next();
  if (first.done) {
    await rm(path, { force: true });
    return false;
  }
  await writeFileAtomic(
    path,
    (async function* () {
      yield first.value;
      yield* chunks;
    })(),
    file,
  );
  return true;
}
