import type { Diagnostic, ManifestJob } from '../../manifest/model.js';
import { patchableOf } from '../apply-changes.js';
import { fullResolution, withFindings, type JobState } from '../job-state.js';
import { blocksSubmission, holdsInput, jobStatus } from '../job-status.js';
import { submitJob, type SubmitRequest } from '../submit-job.js';
import type { StageContext } from './context.js';
import { withLedgerOutcome } from './ledger-outcome.js';

/**
 * All or nothing: unless `--partial`, one job that is invalid, failed, in doubt or waiting for
 * approval keeps every ready job of the manifest from being submitted — except a suspected
 * duplicate, which holds only itself (holdsInput). Decided once every job has been through the
 * plan stages (the only point where one job waits for the others).
 */
export function mustHoldBack(jobs: readonly JobState[], partial: boolean): boolean {
  return !partial && jobs.some(holdsInput);
}

/** Every ready job, held back: not submitted, and told why. */
export function holdBack(jobs: readonly JobState[], ctx: StageContext): JobState[] {
  const failed = jobs.some((job) => blocksSubmission(job.outcome) && job.outcome !== 'awaiting-approval');
  return notSubmitted(
    jobs,
    ctx,
    'run.held-back',
    `valid, but not submitted because another job of this manifest ${failed ? 'failed' : 'waits for approval'} ` +
      '(all or nothing; use --partial to submit the valid jobs)',
  );
}

/** Every ready job, withdrawn before the first submit because the input itself must not be used (`why`). */
export function withdraw(jobs: readonly JobState[], ctx: StageContext, why: string): JobState[] {
  return notSubmitted(jobs, ctx, 'run.input-changed', `not submitted: ${why}`);
}

function notSubmitted(jobs: readonly JobState[], ctx: StageContext, code: string, message: string): JobState[] {
  return jobs.map((job) => {
    if (job.outcome !== 'ready') return job;
    const field = `jobs[${job.index}]`;
    const heldBack: Diagnostic = {
      severity: 'error',
      code,
      message,
      field,
      source: ctx.manifest.sources.locate(field),
    };
    return { ...withFindings(job, [heldBack]), outcome: 'held-back' };
  });
}

/** Submits a ready job exactly once (submit-job.ts): the only stage that creates anything. */
export async function submit(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  const outcome = await submitJob(ctx.submit, submitRequest(job, ctx));
  const next = withLedgerOutcome(job, outcome, ctx);
  const status = jobStatus(next.outcome);
  const jobNumber = outcome.entry?.jobNumber ?? null;
  ctx.logger.info({ file: ctx.displayName, orderNumber: job.orderNumber, status, jobNumber }, 'job outcome');
  return next;
}

/** What the exactly-once protocol is asked to send for a ready job. */
export function submitRequest(job: JobState & { outcome: 'ready' }, ctx: StageContext): SubmitRequest {
  const resolved = fullResolution(job);
  return {
    orderNumber: resolved.orderNumber,
    hash: job.hash,
    candidate: resolved.candidate,
    patchable: patchableOf(ctx.manifest.jobs.at(job.index) as ManifestJob),
  };
}
