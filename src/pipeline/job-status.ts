import type { JobStatus } from '../report/model.js';
import type { JobState, StageOutcome } from './job-state.js';

/**
 * The one place that decides the status a job is reported with. Stages say where a job
 * stands (a StageOutcome); only this says what the report and the exit code make of it.
 */
export function jobStatus(outcome: StageOutcome): JobStatus {
  switch (outcome) {
    case 'checked':
    case 'ready':
      return 'valid';
    case 'refused':
      return 'invalid';
    case 'awaiting-approval':
      return 'awaiting-approval';
    case 'held-back':
      return 'not-submitted';
    case 'created':
      return 'submitted';
    case 'found':
      return 'already-submitted';
    case 'not-created':
    case 'not-processed':
      return 'failed';
    case 'unknown':
      return 'in-doubt';
  }
}

const BLOCKING: ReadonlySet<JobStatus> = new Set<JobStatus>(['invalid', 'failed', 'in-doubt', 'awaiting-approval']);

/** A job in this state keeps every other job of its manifest from being submitted (all or nothing). */
export function blocksSubmission(outcome: StageOutcome): boolean {
  return BLOCKING.has(jobStatus(outcome));
}

/**
 * Whether the job keeps the other jobs of its input from being submitted (all or nothing,
 * docs/guardrails.md): a job in a blocking state does, except one that waits only as a
 * suspected duplicate. That says something about this order and an earlier one, not about the
 * input, so it holds itself alone; a limit (a shifted column, a doubled export) holds the input.
 */
export function holdsInput(
  job: Pick<JobState, 'outcome' | 'holdReasons'> & { diagnostics?: JobState['diagnostics'] },
): boolean {
  if (!blocksSubmission(job.outcome)) return false;
  // An order whose entry cannot be read was sent or meant by an earlier run: nothing about this input.
  if (job.outcome !== 'awaiting-approval') return !job.diagnostics?.some((d) => d.code === ENTRY_UNREADABLE);
  const reasons = job.holdReasons ?? [];
  return reasons.length === 0 || reasons.some((r) => r.code !== DUPLICATE);
}

/** The error of an order whose ledger entry cannot be read (stages/ledger-outcome.ts, withUnreadableEntry). */
export const ENTRY_UNREADABLE = 'ledger.entry-unreadable';

/** The reason code of a suspected duplicate (stages/guard.ts). */
export const DUPLICATE = 'approval.duplicate';
