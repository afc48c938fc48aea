import type { JobState, StageOutcome } from './job-state.js';
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
  const planned =
    command === 'plan' && resolved
      ? { orderNumber: resolved.orderNumber, request: requestOf(resolved), estimate: resolved.estimate.total ?? null }
      : undefined;
  return {
    index: job.index,
    orderNumber: job.orderNumber,
    outcome: job.outcome,
    unavailable: job.unavailable,
    approved: job.approval !== undefined,
    recorded: job.ledger?.entry !== undefined,
    ...(currency === undefined ? {} : { currency }),
    ...(planned ? { planned } : {}),
  };
}
