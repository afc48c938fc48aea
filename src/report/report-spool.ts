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
 * time: while jobs run (spooled prefix, then the jobs not spooled yet) and at the end. An
 * ended job is read back on its own (resultOf): the spool keeps where each job's text starts
 * (8 bytes a job) and reads that range again, with a few jobs cached.
 */
export class ReportSpool {
  /** Jobs whose text is queued or on disk: jobs 0 … serialised - 1. */
  private serialised = 0;
  /** Ended, in order, not serialised yet: jobs serialised … next - 1. */
  private ready: JobResult[] = [];
  private next = 0;
  /** Ended ahead of `next`. */
  private readonly waiting = new Map<number, JobResult>();
  /** Text made but not yet on disk (the first entries may be being written), and its length in bytes. */
  private queued: Spooled[] = [];
  private queuedBytes = 0;
  /** Bytes of result.json's spool serialised: on disk, then queued. */
  private jsonEnd = 0;
  /** Per serialised job: where its text starts in result.json's spool (after the separator before it). */
  private readonly starts: Float64Array;
  /** Jobs read back lately, by index. */
  private readonly cache = new Map<number, JobResult>();
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
    this.starts = new Float64Array(jobCount);
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
      return this.queuedBytes < HIGH_WATER_BYTES;
    }
    this.ready.push(result);
    for (this.next++; this.waiting.has(this.next); this.next++) {
      this.ready.push(this.waiting.get(this.next) as JobResult);
      this.waiting.delete(this.next);
    }
    while (this.ready.length >= BATCH_JOBS || (this.ready.length > 0 && this.next === this.jobCount))
      this.serialise(this.ready.splice(0, BATCH_JOBS));
    return this.queuedBytes < HIGH_WATER_BYTES;
  }

  /** Per job, as now: 0 while it runs, else not (a copy). */
  endedNow(): Uint8Array {
    return this.statuses.slice();
  }

  /** Job `index`'s status once it has ended. */
  statusOf(index: number): JobStatus | undefined {
    const code = this.statuses[index];
    return code === undefined || code === 0 ? undefined : JOB_STATUSES[code - 1];
  }

  /**
   * Job `index`'s result once it has ended (undefined before): held while it waits to be
   * serialised, else its text read back (from the queue or the file) and parsed, a fresh object
   * each time but for the few cached. Throws when the spool failed or is closed.
   */
  resultOf(index: number): JobResult | undefined {
    if (this.statuses[index] === undefined || this.statuses[index] === 0) return undefined;
    if (index >= this.serialised)
      return index < this.next ? this.ready[index - this.serialised] : this.waiting.get(index);
    const cached = this.cache.get(index);
    if (cached !== undefined) return cached;
    if (this.failure !== undefined) throw this.failure;
    if (this.closed) throw new Error('the report spool is closed');
    const start = this.starts[index];
    const end = index + 1 < this.serialised ? this.starts[index + 1] - JOB_SEPARATOR_BYTES : this.jsonEnd;
    const bytes = start >= this.json.size ? this.queuedBytesAt(start, end) : this.json.readSync(start, end - start);
    const result = JSON.parse(bytes.toString('utf8')) as JobResult;
    if (this.cache.size >= CACHED_JOBS) this.cache.delete(this.cache.keys().next().value as number);
    this.cache.set(index, result);
    return result;
  }

  private queuedBytesAt(start: number, end: number): Buffer {
    for (const q of this.queued) {
      if (start >= q.at && end <= q.at + q.json.length) return q.json.subarray(start - q.at, end - q.at);
    }
    throw new Error(`the report spool has no text at byte ${start}`);
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
   * the ended jobs not serialised yet and what each running one is rendered from (`pending`),
   * and the summary of all (each running job rendered once for it, and let go).
   */
  snapshot(head: Pick<ResultReport, 'errors' | 'warnings'>, pending: PendingJobs): Snapshot {
    const source = pendingSource(pending);
    const s = emptySummary();
    s.jobs = this.jobCount;
    s.items = this.ended.items;
    s.errors = head.errors.length + this.ended.errors;
    s.warnings = head.warnings.length + this.ended.warnings;
    for (const status of JOB_STATUSES) s.byStatus[status] = this.ended.byStatus[status];
    if (this.ended.artworkNeeded !== undefined) s.artworkNeeded = this.ended.artworkNeeded;
    const from = this.serialised;
    const next = this.next;
    const held = [...this.ready];
    const waiting = new Map(this.waiting);
    const refs = new Array<unknown>(this.jobCount - next);
    for (let i = next; i < this.jobCount; i++) {
      if (waiting.has(i)) continue;
      const at = source.at(i);
      refs[i - next] = at;
      addToSummary(s, source.render(i, at));
    }
    const job = (i: number): JobResult =>
      i < next ? (held[i - from] as JobResult) : (waiting.get(i) ?? source.render(i, refs[i - next]));
    return {
      jsonBytes: this.json.size,
      errorBytes: this.errors.size,
      queued: [...this.queued],
      from,
      count: this.jobCount - from,
      job,
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
    for (let at = 0; at < snap.count; at += BATCH_JOBS) {
      const batch: JobResult[] = [];
      for (let i = at; i < Math.min(at + BATCH_JOBS, snap.count); i++) batch.push(snap.job(snap.from + i));
      yield jobsSeparator(snap.from + at) + batchJson(batch);
    }
    yield resultJsonTail(this.jobCount);
  }

  /** errors.txt's text from the snapshot, the file-level `errors` first. */
  async *errorChunks(snap: Snapshot, errors: ResultReport['errors']): AsyncGenerator<string | Uint8Array> {
    if (errors.length > 0) yield errors.map((e) => `${formatReportError(e, this.label)}\n`).join('');
    yield* this.errors.read(snap.errorBytes);
    for (const q of snap.queued) if (q.errors.length > 0) yield q.errors;
    for (let i = 0; i < snap.count; i++) {
      const lines = this.errorText(snap.job(snap.from + i));
      if (lines !== '') yield lines;
    }
  }

  private errorText(job: JobResult): string {
    let text = '';
    for (const e of jobErrors(job)) text += `${formatReportError(e, this.label)}\n`;
    return text;
  }

  /**
   * Queues a batch's text, each job's serialised on its own (batchJson of one job is that job's
   * part of batchJson of many), so that where each starts is known.
   */
  private serialise(batch: JobResult[]): void {
    const at = this.jsonEnd;
    let text = '';
    let end = at;
    for (const job of batch) {
      const separator = jobsSeparator(this.serialised);
      const own = batchJson([job]);
      this.starts[this.serialised++] = end + separator.length;
      end += separator.length + Buffer.byteLength(own);
      text += separator + own;
    }
    this.jsonEnd = end;
    if (this.failure !== undefined) return; // nothing more is written: every report write fails
    const json = Buffer.from(text);
    const errors = Buffer.from(batch.map((job) => this.errorText(job)).join(''));
    this.queued.push({ json, errors, at });
    this.queuedBytes += json.length + errors.length;
    this.writing ??= this.drain();
  }

  /** Appends the queued text to the spools, all that is queued at a time, until none is left. */
  private async drain(): Promise<void> {
    try {
      while (this.queued.length > 0 && this.failure === undefined) {
        const n = this.queued.length;
        const json = Buffer.concat(this.queued.map((q) => q.json));
        const errors = Buffer.concat(this.queued.map((q) => q.errors));
        await Promise.all([this.json.write(json, this.json.size), this.errors.write(errors, this.errors.size)]);
        // One step: a snapshot sees each text once, queued or on disk.
        this.json.size += json.length;
        this.errors.size += errors.length;
        this.queued = this.queued.slice(n);
        this.queuedBytes -= json.length + errors.length;
      }
    } catch (err) {
      this.failure ??= err;
      this.queued = [];
      this.queuedBytes = 0;
      await Promise.all([this.json.remove(), this.errors.remove()]).catch(() => undefined);
    } finally {
      this.writing = undefined;
    }
  }
}

/** Bytes waiting for the disk past which `end` asks the caller to wait. */
const HIGH_WATER_BYTES = 4 << 20;
/** Ended jobs read back kept at a time: a writer reads each job a few times in a row, not again later. */
const CACHED_JOBS = 64;
/** The separator between two jobs' texts (jobsSeparator): `,` and a line break. */
const JOB_SEPARATOR_BYTES = 2;

/**
 * The jobs that have not ended, as a write shows them: either each one's result (the caller
 * still holds it), or what each is rendered from, taken when the write begins (`at`: a
 * reference to the job's state, nothing copied) and rendered when written (`render`).
 */
export type PendingJobs = ((index: number) => JobResult) | PendingSource;

export interface PendingSource {
  at(index: number): unknown;
  render(index: number, at: unknown): JobResult;
}

function pendingSource(pending: PendingJobs): PendingSource {
  if (typeof pending !== 'function') return pending;
  return {
    at: (i) => {
      const job = pending(i);
      if (job === undefined) throw new Error(`job ${i} has neither ended nor a pending result`);
      return job;
    },
    render: (_, at) => at as JobResult,
  };
}

interface Spooled {
  json: Buffer;
  errors: Buffer;
  /** Where `json` starts in result.json's spool. */
  at: number;
}

/** What one write of the reports shows (ReportSpool.snapshot). */
export interface Snapshot {
  jsonBytes: number;
  errorBytes: number;
  queued: readonly Spooled[];
  /** The first job not serialised, and how many jobs from it on. */
  from: number;
  count: number;
  /** Job `i` (from `from` on) as the snapshot shows it: ended and waiting, or running (rendered now). */
  job(i: number): JobResult;
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
