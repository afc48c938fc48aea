import { type JobState, STAGE_OUTCOMES, type StageOutcome } from './job-state.js';
import { type PlannedJob, requestOf } from './saved-plan.js';

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
  /** `plan`: the request run would send for a valid job, as a saved plan holds it. */
  readonly planned?: PlannedJob;
}

/** The record kept of `job`; `plan` also keeps the fingerprint of the request a saved plan needs. */
export function jobEnd(job: JobState, command: 'plan' | 'run' | 'watch'): JobEnd {
  const resolved = job.resolved;
  const currency = resolved?.estimate.currency;
  const bits =
    (STAGE_OUTCOMES.indexOf(job.outcome) << OUTCOME_SHIFT) |
    (job.unavailable ? UNAVAILABLE : 0) |
    (job.approval !== undefined ? APPROVED : 0) |
    (job.ledger?.entry !== undefined ? RECORDED : 0);
  if (command === 'plan' && resolved) {
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
