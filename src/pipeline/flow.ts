import { LedgerEntryUnreadableError } from '../storage/ledger/model.js';
import { apiDiagnostics, errorText } from './api-diagnostics.js';
import { withFindings, type JobState } from './job-state.js';
import type { Stage, StageContext } from './stages/context.js';
import { withUnreadableEntry } from './stages/ledger-outcome.js';

/**
 * How jobs move through the stages: each job on its own, one stage after another, many jobs
 * at once. A stage that throws (only infrastructure failures do: an unreachable API,
 * credentials refused, the disk) leaves the job `not-processed` — or in doubt, if it was —
 * and it goes through no further stage. Refusals of the job itself are findings, not throws.
 */

/** The stages one after another, as one stage. */
export function flow(...stages: Stage[]): Stage {
  return async (job, ctx) => {
    let next = job;
    for (const stage of stages) {
      try {
        next = await stage(next, ctx);
      } catch (err) {
        return notProcessed(next, err, ctx);
      }
    }
    return next;
  };
}

/**
 * A job a failure of the API, the credentials, the store or the disk stopped: nothing was
 * decided (exit 3). An entry of its order that cannot be read fails it instead (exit 1).
 */
export function notProcessed(job: JobState, err: unknown, ctx: StageContext): JobState {
  // Not the store away but one order's entry: that order fails, alone (ledger-outcome.ts).
  if (err instanceof LedgerEntryUnreadableError) return withUnreadableEntry(job, err, ctx);
  const file = ctx.displayName;
  ctx.logger.error({ file, orderNumber: job.orderNumber, err: errorText(err) }, 'job could not be processed');
  const next = withFindings(job, apiDiagnostics(err, ctx.manifest, job.index));
  return { ...next, outcome: job.outcome === 'unknown' ? 'unknown' : 'not-processed', unavailable: true };
}

export interface EachJob<T> {
  /** Which jobs the stage is for; the others pass through unchanged. */
  select: (job: JobState) => boolean;
  stage: Stage;
  ctx: StageContext;
  /** At most this many jobs in the stage at once. */
  width: number;
  /** Told of each job as it comes out of the stage. */
  onJob?: (job: JobState) => void;
  /** What is kept of each job, selected or not, once it is out of the stage (the job itself, or a small record of it). */
  keep: (job: JobState) => T;
  /** How many selected jobs are done, out of how many: 0 before any starts, then after each one. */
  progress?: (done: number, total: number) => void;
}

/**
 * Runs the stage on every selected job (forEachJob); returns what is kept of every job in
 * manifest order.
 */
export async function eachJob<T>(jobs: Array<JobState | undefined>, each: EachJob<T>): Promise<T[]> {
  const kept = new Array<T>(jobs.length);
  const { keep, ...rest } = each;
  await forEachJob(jobs, { ...rest, done: (i, job) => (kept[i] = keep(job)) });
  return kept;
}

/**
 * Runs the stage on every selected job, at most `width` at a time, in manifest order, and hands
 * each job, selected or not, to `done` once it is out of the stage. Each job goes on as soon as
 * its own previous stage is done. `width` runners take the jobs one after another, so nothing
 * is queued per job ahead of its turn, and an input of one job (watch's one-order files) runs
 * it directly. `jobs` is consumed: each slot is emptied as its job is taken, so a job's state
 * lives only until `done` has kept what it keeps of it (an input of many jobs does not hold
 * every job's state to the end of the stage).
 */
export async function forEachJob(
  jobs: Array<JobState | undefined>,
  each: Omit<EachJob<unknown>, 'keep'> & { done: (index: number, job: JobState) => void },
): Promise<void> {
  let total = 0;
  for (const job of jobs) if (job !== undefined && each.select(job)) total++;
  let done = 0;
  each.progress?.(done, total);
  let next = 0;
  const runner = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      const job = jobs[i];
      if (job === undefined) throw new Error(`eachJob: job ${i} was taken already`);
      jobs[i] = undefined;
      if (!each.select(job)) {
        each.done(i, job);
        continue;
      }
      const out = await each.stage(job, each.ctx);
      each.onJob?.(out);
      each.progress?.(++done, total);
      each.done(i, out);
    }
  };
  const runners = Math.max(1, Math.min(each.width, jobs.length));
  await Promise.all(Array.from({ length: runners }, runner));
}
