import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { type NewFileOptions, writeFileAtomic } from '../storage/atomic-write.js';
import { AsideJobs, type AsideText, type AsideView } from './aside-jobs.js';
import { addToSummary, emptySummary } from './build-report.js';
import { itemCount } from './lazy-items.js';
import { JOB_STATUSES, type JobResult, type JobStatus, type ReportSummary, type ResultReport } from './model.js';
import type { ReportPaths } from './report-paths.js';
import { SpoolFile } from '../storage/spool-file.js';
import { formatReportError, jobErrors } from './write-errors-txt.js';
import { type JobGlance, glanceOf } from './job-glance.js';
import { BATCH_JOBS, batchJson, jobsSeparator, resultJsonHead, resultJsonTail } from './write-result-json.js';

/**
 * A report whose ended jobs live on disk, not in memory. A job's result never changes once the
 * job has ended, so it is written out then: its text in result.json (exactly as
 * resultJsonChunks prints it) to one temporary file beside the reports, its lines of errors.txt
 * to another, in manifest order, and only counts stay in memory (the summary's, and per job its
 * status and whether it has errors). Jobs end out of order within a window: those ahead of the
 * first job still running wait in memory, up to a fixed weight (a job weighs one plus its items);
 * past it, while a slow job holds the others back, each one that ends ahead is serialised at once
 * to a side file (AsideJobs), and copied into the spool in order when the jobs before it have
 * ended, so what a run holds does not grow with the jobs one slow job holds back.
 *
 * errors.txt is spooled as its own text rather than kept as error objects or read back out of
 * the JSON spool: a run where one failure holds every other job back gives every job an error,
 * so keeping them would grow with the jobs, and reading them back would mean parsing the whole
 * JSON spool again at every write.
 *
 * The reports are assembled from the spools (writeSpooledJson, writeSpooledErrors) at any
 * time: while jobs run (spooled prefix, then the jobs not spooled yet) and at the end. An
 * ended job is read back on its own (resultOf): the spool keeps where each job's text starts
 * (8 bytes a job) and reads that range again with the bytes after it (the next jobs, read in
 * order), with a few jobs cached.
 */
export class ReportSpool {
  /** Jobs whose text is queued or on disk: jobs 0 … serialised - 1. */
  private serialised = 0;
  /** The first job that has not ended: jobs serialised … next - 1 have ended and wait to be serialised. */
  private next = 0;
  /** Ended jobs not serialised yet that are held in memory (the others are set aside), and their weight. */
  private readonly held = new Map<number, JobResult>();
  private heldWeight = 0;
  /** Text made but not yet on disk (the first entries may be being written), and its length in bytes (the side file's too). */
  private queued: Spooled[] = [];
  private queuedBytes = 0;
  /** Bytes of result.json's spool serialised: on disk, then queued. */
  private jsonEnd = 0;
  /** Per serialised job: where its text starts in result.json's spool (after the separator before it). */
  private readonly starts: Float64Array;
  /** Jobs read back lately, by index. */
  private readonly cache = new Map<number, JobResult>();
  /** The bytes of the spool's file read last, from `at`: the next jobs' texts, when jobs are read back in order. */
  private readAhead: { at: number; bytes: Buffer } | undefined;
  private writing: Promise<void> | undefined;
  private failure: unknown;
  private closed = false;
  /** Per job: 0 while it runs, else 1 + its status's place in JOB_STATUSES. */
  private readonly statuses: Uint8Array;
  /** Per job: 1 when it ended with an error of its own or of an item. */
  private readonly withErrors: Uint8Array;
  /** Per job: 1 when it ended with a warning of its own. */
  private readonly withWarnings: Uint8Array;
  /** Per job: its estimated cost once it has ended, NaN for none. */
  private readonly costs: Float64Array;
  /** The ended jobs' counts (its `jobs` stays 0). */
  private readonly ended = emptySummary();

  private constructor(
    readonly jobCount: number,
    private readonly label: string,
    private readonly json: SpoolFile,
    private readonly errors: SpoolFile,
    /** Ended jobs not serialised yet whose text went to the side file. */
    private readonly aside: AsideJobs,
    private readonly heldMost: number,
  ) {
    this.statuses = new Uint8Array(jobCount);
    this.withErrors = new Uint8Array(jobCount);
    this.withWarnings = new Uint8Array(jobCount);
    this.costs = new Float64Array(jobCount);
    this.starts = new Float64Array(jobCount);
  }

  /**
   * A spool for a report of `jobCount` jobs whose files are `paths` (the temporary files go
   * beside them), for the input `input` (`report.input.file`: errors.txt names its base name).
   * `heldWeight`: how much of the jobs that end ahead it holds in memory (HELD_WEIGHT).
   */
  static async create(
    paths: Pick<ReportPaths, 'json' | 'errors'>,
    jobCount: number,
    input: string,
    { heldWeight = HELD_WEIGHT }: { heldWeight?: number } = {},
  ): Promise<ReportSpool> {
    const json = await SpoolFile.create(paths.json);
    try {
      const errors = await SpoolFile.create(paths.errors);
      const aside = new AsideJobs(paths.json, jobCount);
      return new ReportSpool(jobCount, basename(input), json, errors, aside, heldWeight);
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
    const glance = glanceOf(result);
    this.withErrors[index] = glance.errors ? 1 : 0;
    this.withWarnings[index] = glance.warnings ? 1 : 0;
    this.costs[index] = glance.estimatedCost ?? Number.NaN;
    addToSummary(this.ended, result);
    this.hold(index, result);
    this.pump();
    return this.queuedBytes < HIGH_WATER_BYTES;
  }

  /**
   * Keeps an ended job until it is serialised: in memory when it is the first job still running
   * (then `next` moves past the jobs that have ended) or while the jobs held weigh little
   * enough, else set aside at once.
   */
  private hold(index: number, result: JobResult): void {
    const weight = weightOf(result);
    if (index === this.next || this.heldWeight + weight <= this.heldMost) {
      this.held.set(index, result);
      this.heldWeight += weight;
      while (this.next < this.jobCount && this.statuses[this.next] !== 0) this.next++;
    } else if (this.failure !== undefined) {
      this.aside.skip(index); // nothing more is written: every report write fails
    } else {
      this.queuedBytes += this.aside.put(index, batchJson([result]), this.errorText(result));
      this.writing ??= this.drain();
    }
  }

  /** Serialises the ended jobs in order, a batch at a time (the rest at the end), while the disk keeps up. */
  private pump(): void {
    for (;;) {
      const count = Math.min(BATCH_JOBS, this.next - this.serialised);
      if (count === 0 || (count < BATCH_JOBS && this.next < this.jobCount)) return;
      // The writes under way go on with the rest (drain).
      if (this.queuedBytes >= HIGH_WATER_BYTES && this.failure === undefined) return;
      this.serialise(count);
    }
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
    const held = index >= this.serialised ? this.held.get(index) : undefined;
    if (held !== undefined) return held;
    const cached = this.cache.get(index);
    if (cached !== undefined) return cached;
    if (this.failure !== undefined) throw this.failure;
    if (this.closed) throw new Error('the report spool is closed');
    const result = JSON.parse(this.spooledText(index).toString('utf8')) as JobResult;
    if (this.cache.size >= CACHED_JOBS) this.cache.delete(this.cache.keys().next().value as number);
    this.cache.set(index, result);
    return result;
  }

  /** An ended job's result.json text (not held): set aside, or serialised (queued or on disk). */
  private spooledText(index: number): Buffer {
    if (index >= this.serialised) return this.aside.text(index).json;
    const start = this.starts[index];
    const end = index + 1 < this.serialised ? this.starts[index + 1] - JOB_SEPARATOR_BYTES : this.jsonEnd;
    return start >= this.json.size ? this.queuedBytesAt(start, end) : this.fileBytesAt(start, end);
  }

  /**
   * Bytes [start, end) of result.json's spool on disk, read with those after them up to
   * READ_AHEAD_BYTES: what reads every job back in order (result.csv's rows, the summary run
   * prints) makes one read a block of jobs, not a synchronous read a job, each holding the event
   * loop (`npm run bench -- --trace`: the time from the last answer to exit). The file only
   * grows, so bytes read once stay true.
   */
  private fileBytesAt(start: number, end: number): Buffer {
    const r = this.readAhead;
    if (r !== undefined && start >= r.at && end <= r.at + r.bytes.length)
      return r.bytes.subarray(start - r.at, end - r.at);
    const length = Math.max(end - start, Math.min(READ_AHEAD_BYTES, this.json.size - start));
    const bytes = this.json.readSync(start, length);
    this.readAhead = { at: start, bytes };
    return bytes.subarray(0, end - start);
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

  /** What a summary needs of job `index` once it has ended, without reading it back; undefined before. */
  glance(index: number): JobGlance | undefined {
    const status = this.statusOf(index);
    if (status === undefined) return undefined;
    const cost = this.costs[index];
    return {
      status,
      estimatedCost: Number.isNaN(cost) ? null : cost,
      errors: this.withErrors[index] === 1,
      warnings: this.withWarnings[index] === 1,
    };
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
    this.readAhead = undefined;
    while (this.writing) await this.writing;
    await Promise.all([this.json.remove(), this.errors.remove(), this.aside.remove()]);
  }

  /**
   * The report as it is now, taken at once (synchronously), so that jobs ending while it is
   * written out do not change it: how much of each spool is on disk, the text queued for them,
   * the ended jobs not serialised yet (held, or set aside) and what each running one is rendered
   * from (`pending`), and the summary of all (each running job rendered once for it, and let go).
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
    const held = new Map(this.held);
    const aside: AsideView = this.aside.view();
    const refs = new Array<unknown>(this.jobCount - next);
    for (let i = next; i < this.jobCount; i++) {
      if (this.statuses[i] !== 0) continue; // ended: held or set aside
      const at = source.at(i);
      refs[i - next] = at;
      addToSummary(s, source.render(i, at));
    }
    const setAside = (i: number): AsideText | undefined => (held.has(i) || !aside.holds(i) ? undefined : aside.text(i));
    const job = (i: number): JobResult => {
      const own = held.get(i);
      if (own !== undefined) return own;
      const text = setAside(i);
      return text === undefined
        ? source.render(i, refs[i - next])
        : (JSON.parse(text.json.toString('utf8')) as JobResult);
    };
    return {
      jsonBytes: this.json.size,
      errorBytes: this.errors.size,
      queued: [...this.queued],
      from,
      count: this.jobCount - from,
      job,
      setAside,
      summary: s,
    };
  }

  /** Throws when a spool write failed or a spool file is not where it was made. */
  async verify(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    if (this.closed) throw new Error('the report spool is closed');
    await Promise.all([this.json.verify(), this.errors.verify(), this.aside.verify()]);
  }

  /** result.json's text from the snapshot, `head` first (with the snapshot's summary). */
  async *jsonChunks(snap: Snapshot, head: Omit<ResultReport, 'jobs'>): AsyncGenerator<string | Uint8Array> {
    // A whole report may be passed as the head: its jobs are the spool's to write.
    const { jobs: _jobs, ...rest } = head as Omit<ResultReport, 'jobs'> & { jobs?: unknown };
    yield resultJsonHead({ ...rest, summary: snap.summary });
    yield* this.json.read(snap.jsonBytes);
    for (const q of snap.queued) yield q.json;
    for (let at = snap.from; at < snap.from + snap.count; at += BATCH_JOBS)
      yield* batchChunks(snap, at, Math.min(at + BATCH_JOBS, snap.from + snap.count));
    yield resultJsonTail(this.jobCount);
  }

  /** errors.txt's text from the snapshot, the file-level `errors` first. */
  async *errorChunks(snap: Snapshot, errors: ResultReport['errors']): AsyncGenerator<string | Uint8Array> {
    if (errors.length > 0) yield errors.map((e) => `${formatReportError(e, this.label)}\n`).join('');
    yield* this.errors.read(snap.errorBytes);
    for (const q of snap.queued) if (q.errors.length > 0) yield q.errors;
    for (let i = snap.from; i < snap.from + snap.count; i++) {
      const lines = snap.setAside(i)?.errors ?? this.errorText(snap.job(i));
      if (lines.length > 0) yield lines;
    }
  }

  private errorText(job: JobResult): string {
    let text = '';
    for (const e of jobErrors(job)) text += `${formatReportError(e, this.label)}\n`;
    return text;
  }

  /**
   * Queues the text of the next `count` ended jobs, each job's serialised on its own (batchJson of
   * one job is that job's part of batchJson of many), so that where each starts is known; a job
   * set aside is copied as it was serialised then.
   */
  private serialise(count: number): void {
    if (this.failure !== undefined) {
      // Nothing more is written: every report write fails.
      for (let k = 0; k < count; k++) this.letGo(this.serialised++);
      return;
    }
    const at = this.jsonEnd;
    const json: Array<string | Buffer> = [];
    const errors: Array<string | Buffer> = [];
    let end = at;
    for (let k = 0; k < count; k++) {
      const separator = jobsSeparator(this.serialised);
      const own = this.letGo(this.serialised) ?? this.aside.text(this.serialised);
      this.starts[this.serialised++] = end + separator.length;
      end += separator.length + Buffer.byteLength(own.json);
      json.push(separator, own.json);
      errors.push(own.errors);
    }
    this.jsonEnd = end;
    const queued = { json: bytesOf(json), errors: bytesOf(errors), at };
    this.queued.push(queued);
    this.queuedBytes += queued.json.length + queued.errors.length;
    this.writing ??= this.drain();
  }

  /** Lets go of job `index` when it is held, and answers its text; undefined when it was set aside. */
  private letGo(index: number): { json: string; errors: string } | undefined {
    const job = this.held.get(index);
    if (job === undefined) return undefined;
    this.held.delete(index);
    this.heldWeight -= weightOf(job);
    return this.failure === undefined ? { json: batchJson([job]), errors: this.errorText(job) } : undefined;
  }

  /**
   * Appends the queued text to the spools (and the side file), all that is queued at a time,
   * serialising more as the disk keeps up, until none is left.
   */
  private async drain(): Promise<void> {
    try {
      while ((this.queued.length > 0 || this.aside.waiting) && this.failure === undefined) {
        const n = this.queued.length;
        const json = Buffer.concat(this.queued.map((q) => q.json));
        const errors = Buffer.concat(this.queued.map((q) => q.errors));
        const [, , aside] = await Promise.all([
          this.json.write(json, this.json.size),
          this.errors.write(errors, this.errors.size),
          this.aside.write(),
        ]);
        // One step: a snapshot sees each text once, queued or on disk.
        this.json.size += json.length;
        this.errors.size += errors.length;
        this.queued = this.queued.slice(n);
        this.queuedBytes -= json.length + errors.length + aside;
        this.pump();
      }
    } catch (err) {
      this.failure ??= err;
      this.queued = [];
      this.queuedBytes = 0;
      await Promise.all([this.json.remove(), this.errors.remove(), this.aside.remove()]).catch(() => undefined);
    } finally {
      this.writing = undefined;
    }
    // After a failure: the jobs the disk held back are let go.
    if (this.failure !== undefined) this.pump();
  }
}

/** Bytes waiting for the disk past which `end` asks the caller to wait. */
const HIGH_WATER_BYTES = 4 << 20;
/** Ended jobs read back kept at a time: a writer reads each job a few times in a row, not again later. */
const CACHED_JOBS = 64;
/** Bytes of the spool read at once when a job is read back (fileBytesAt): some tens of jobs. */
const READ_AHEAD_BYTES = 64 << 10;
/** The separator between two jobs' texts (jobsSeparator): `,` and a line break. */
const JOB_SEPARATOR_BYTES = 2;

/**
 * How much of the jobs that end ahead of the first job still running is held in memory, a job
 * weighing one plus its items (a job's result is some 300 bytes and each item's some 200, so
 * about 1 MB at most). Jobs end out of order within the jobs in flight, up to four times the
 * concurrency (at most 1,024), so only a job held back far longer than its neighbours (an API
 * call in retries, a long backoff, a slow artwork fetch) sets jobs aside. Weighed by items, not
 * counted as jobs: one order of thousands of lines is as much as a thousand small ones.
 */
const HELD_WEIGHT = 4096;

const weightOf = (job: JobResult): number => 1 + itemCount(job);

/** The parts as one buffer, the runs of text encoded at once. */
function bytesOf(parts: ReadonlyArray<string | Buffer>): Buffer {
  const buffers: Buffer[] = [];
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    if (text !== '') buffers.push(Buffer.from(text));
    text = '';
    buffers.push(part);
  }
  if (buffers.length === 0) return Buffer.from(text);
  if (text !== '') buffers.push(Buffer.from(text));
  return Buffer.concat(buffers);
}

/**
 * result.json's text of a snapshot's jobs `from` … `to` - 1 (one batch): the separator before
 * it, then each job's, a job set aside as it was serialised then.
 */
function* batchChunks(snap: Snapshot, from: number, to: number): Generator<string | Uint8Array> {
  let text = jobsSeparator(from);
  let run: JobResult[] = [];
  for (let i = from; i < to; i++) {
    const aside = snap.setAside(i);
    if (aside === undefined) {
      run.push(snap.job(i));
      continue;
    }
    if (run.length > 0) text += `${batchJson(run)},\n`;
    run = [];
    yield text;
    yield aside.json;
    text = i + 1 < to ? ',\n' : '';
  }
  if (run.length > 0) text += batchJson(run);
  if (text !== '') yield text;
}

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
  /** Job `i`'s text (from `from` on) when it had ended and been set aside: write it as it is. */
  setAside(i: number): AsideText | undefined;
  summary: ReportSummary;
}

/**
 * Writes result.json (atomically, writeFileAtomic) as `head`, with the summary of the whole
 * report, then every job: the spooled ones streamed from the spool, then those not spooled yet
 * (`pending` gives each job that has not ended, or a snapshot already taken of them). Byte for
 * byte resultJsonChunks of the same report with its summary refreshed.
 */
export async function writeSpooledJson(
  path: string,
  head: Omit<ResultReport, 'jobs'>,
  spool: ReportSpool,
  pending: PendingJobs | Snapshot,
  file?: NewFileOptions,
): Promise<void> {
  await spool.verify();
  const snap = snapshotOf(spool, head, pending);
  await writeFileAtomic(path, spool.jsonChunks(snap, head), file);
}

/** `from` when it is a snapshot already taken (of `spool`), else one taken now. */
function snapshotOf(
  spool: ReportSpool,
  head: Pick<ResultReport, 'errors' | 'warnings'>,
  from: PendingJobs | Snapshot,
): Snapshot {
  return typeof from === 'object' && 'summary' in from ? from : spool.snapshot(head, from);
}

/**
 * Writes errors.txt as writeErrorsTxt does for the same report: every error, file-level first,
 * one line each; when there is none, removes it instead and answers false. `pending` as
 * writeSpooledJson's.
 */
export async function writeSpooledErrors(
  path: string,
  head: Pick<ResultReport, 'errors' | 'warnings'>,
  spool: ReportSpool,
  pending: PendingJobs | Snapshot,
  file?: NewFileOptions,
): Promise<boolean> {
  await spool.verify();
  const chunks = spool.errorChunks(snapshotOf(spool, head, pending), head.errors);
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
