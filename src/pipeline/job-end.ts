import { type JobState, STAGE_OUTCOMES, type StageOutcome } from './job-state.js';
import { jobStatus } from './job-status.js';
import { type PlannedJob, requestOf } from './saved-plan.js';
import { Interned } from './job-table.js';
import { StringColumn } from '../core/string-column.js';

/**
 * What an input keeps of a job once the job's outcome is in the report: a small record of a
 * fixed size, where the job's state held its resolution (the whole request body), its ledger
 * entry and its findings. An input of many thousands of jobs then holds no more per finished
 * job than this (`npm run bench -- --memory`).
 */
export interface JobEnd {
  readonly index: number;
  readonly orderNumber: string;
  readonly outcome: StageOutcome;
  /** The API could not be reached or refused the credentials while this job was processed. */
  readonly unavailable: boolean;
  /** The job went through the guardrails on an approval. */
  readonly approved: boolean;
  /** The ledger records the order: its entry was read or written by this run. */
  readonly recorded: boolean;
  /** The account's currency as the job's estimate gave it. */
  readonly currency?: string;
  /** `plan --out`: the request run would send for a valid job, as a saved plan holds it. */
  readonly planned?: PlannedJob;
}

/**
 * The record kept of `job`; with `keepRequest` (`plan --out`) also, for a job that ends valid,
 * the fingerprint of the request a saved plan needs. The status is the report's (jobStatus, of
 * the state the report's result is rendered from), so a saved plan holds the valid jobs without
 * reading the report's results back.
 */
export function jobEnd(job: JobState, keepRequest: boolean): JobEnd {
  const resolved = job.resolved;
  const currency = resolved?.estimate.currency;
  const bits =
    (STAGE_OUTCOMES.indexOf(job.outcome) << OUTCOME_SHIFT) |
    (job.unavailable ? UNAVAILABLE : 0) |
    (job.approval !== undefined ? APPROVED : 0) |
    (job.ledger?.entry !== undefined ? RECORDED : 0);
  if (keepRequest && resolved && jobStatus(job.outcome) === 'valid') {
    const planned = {
      orderNumber: resolved.orderNumber,
      request: requestOf(resolved),
      estimate: resolved.estimate.total ?? null,
    };
    return new PlannedEnd(job.index, job.orderNumber, bits, currency, planned);
  }
  return new Ended(job.index, job.orderNumber, bits, currency);
}

const UNAVAILABLE = 1;
const APPROVED = 2;
const RECORDED = 4;
const OUTCOME_SHIFT = 3;

/**
 * A JobEnd in four fields of one hidden class (the outcome and the three flags in one small
 * integer): an input holds one for each of its jobs until it ends.
 */
class Ended implements JobEnd {
  constructor(
    readonly index: number,
    readonly orderNumber: string,
    private readonly bits: number,
    readonly currency: string | undefined,
  ) {}

  get outcome(): StageOutcome {
    const outcome = STAGE_OUTCOMES[this.bits >>> OUTCOME_SHIFT];
    if (outcome === undefined) throw new Error(`job ${this.index}: no outcome`);
    return outcome;
  }

  get unavailable(): boolean {
    return (this.bits & UNAVAILABLE) !== 0;
  }

  get approved(): boolean {
    return (this.bits & APPROVED) !== 0;
  }

  get recorded(): boolean {
    return (this.bits & RECORDED) !== 0;
  }
}

/** `plan`'s record of a job whose request a saved plan names. */
class PlannedEnd extends Ended {
  constructor(
    index: number,
    orderNumber: string,
    bits: number,
    currency: string | undefined,
    readonly planned: PlannedJob,
  ) {
    super(index, orderNumber, bits, currency);
  }
}

/** What reads an input's end records: every job's, in manifest order (JobEnds, or an array of them). */
export interface JobEndList extends Iterable<JobEnd> {
  readonly length: number;
  some(test: (job: JobEnd) => boolean): boolean;
  every(test: (job: JobEnd) => boolean): boolean;
  filter(test: (job: JobEnd) => boolean): JobEnd[];
  find(test: (job: JobEnd) => boolean): JobEnd | undefined;
}

/** Set for a job whose order number is its own, not its input's (`names`). */
const OWN_NAME = 128;

/**
 * Every job's end record of one input, in columns rather than an object a job: per job one
 * byte of outcome and flags, two of currency (interned), and its order number: read from its
 * input's column (`names`, the JobTable's) when it is the same, else kept here. A record is
 * made when read (`at`, iteration), and lives as long as its reader keeps it. A finished job
 * holds a few bytes here, where a record object and its order number's string held about 100.
 */
export class JobEnds implements JobEndList {
  /** Per job: 0 until it ends, else its outcome's place + 1 (above the flags) and its flags. */
  private readonly bits: Uint8Array;
  /** Per job: 0 (none, or one in `moreCurrencies`) or its currency's number in `currencies`. */
  private readonly currencyOf: Uint16Array;
  private readonly currencies = new Interned(1, 0xffff);
  /** Currencies past what the codes hold, by job. */
  private readonly moreCurrencies = new Map<number, string>();
  /** Order numbers not the same as the input's. */
  private own: StringColumn | undefined;
  /** `plan --out`: each valid job's request, as a saved plan holds it. */
  private readonly planned = new Map<number, PlannedJob>();

  /** `length` jobs; `names` gives job `i`'s order number as its input has it (none: every one is kept here). */
  constructor(
    readonly length: number,
    private readonly names?: (i: number) => string | undefined,
  ) {
    this.bits = new Uint8Array(length);
    this.currencyOf = new Uint16Array(length);
  }

  /** Keeps `job`'s end record (jobEnd's) in its place, `job.index`. */
  set(job: JobState, keepRequest: boolean): void {
    const end = jobEnd(job, keepRequest);
    const i = end.index;
    if (!(Number.isInteger(i) && i >= 0 && i < this.length)) throw new RangeError(`no job ${i} among ${this.length}`);
    const shared = this.names?.(i) === end.orderNumber;
    if (!shared) {
      this.own ??= new StringColumn(this.length);
      this.own.set(i, end.orderNumber);
    }
    this.bits[i] =
      ((STAGE_OUTCOMES.indexOf(end.outcome) + 1) << OUTCOME_SHIFT) |
      (end.unavailable ? UNAVAILABLE : 0) |
      (end.approved ? APPROVED : 0) |
      (end.recorded ? RECORDED : 0) |
      (shared ? 0 : OWN_NAME);
    this.keepCurrency(i, end.currency);
    if (end.planned !== undefined) this.planned.set(i, end.planned);
  }

  /** Job `i`'s end record, made now; undefined while it has not ended. */
  at(i: number): JobEnd | undefined {
    const bits = this.bits[i];
    if (bits === undefined || bits === 0) return undefined;
    const orderNumber = (bits & OWN_NAME ? this.own?.get(i) : this.names?.(i)) ?? '';
    const code = this.currencyOf[i];
    const currency = code === 0 ? this.moreCurrencies.get(i) : this.currencies.valueOf(code);
    const kept = ((bits & ~OWN_NAME) >>> OUTCOME_SHIFT) - 1;
    const own = (kept << OUTCOME_SHIFT) | (bits & (UNAVAILABLE | APPROVED | RECORDED));
    const planned = this.planned.get(i);
    return planned === undefined
      ? new Ended(i, orderNumber, own, currency)
      : new PlannedEnd(i, orderNumber, own, currency, planned);
  }

  *[Symbol.iterator](): Iterator<JobEnd> {
    for (let i = 0; i < this.length; i++) {
      const end = this.at(i);
      if (end === undefined) throw new Error(`job ${i} has not ended`);
      yield end;
    }
  }

  some(test: (job: JobEnd) => boolean): boolean {
    for (const job of this) if (test(job)) return true;
    return false;
  }

  every(test: (job: JobEnd) => boolean): boolean {
    return !this.some((job) => !test(job));
  }

  filter(test: (job: JobEnd) => boolean): JobEnd[] {
    const out: JobEnd[] = [];
    for (const job of this) if (test(job)) out.push(job);
    return out;
  }

  find(test: (job: JobEnd) => boolean): JobEnd | undefined {
    for (const job of this) if (test(job)) return job;
    return undefined;
  }

  private keepCurrency(i: number, currency: string | undefined): void {
    this.moreCurrencies.delete(i);
    if (currency === undefined) {
      this.currencyOf[i] = 0;
      return;
    }
    const code = this.currencies.numberOf(currency);
    this.currencyOf[i] = code ?? 0;
    if (code === undefined) this.moreCurrencies.set(i, currency);
  }
}
