import { apiDiagnostics, isRefusal } from '../api-diagnostics.js';
import type { JobCreateResponse } from '../../api/types.js';
import type { Diagnostic } from '../../manifest/model.js';
import { fullResolution, withFindings, type JobState } from '../job-state.js';
import { settleDryRunJob } from '../submit-job.js';
import type { StageContext } from './context.js';
import { withLedgerOutcome } from './ledger-outcome.js';
import { submitRequest } from './submit.js';

/**
 * The API's own check of the exact request (`validateOnly`): what only the API can refuse is
 * found before anything is created. A refusal makes the job invalid; the API being
 * unavailable is thrown, and the job is then not processed (flow.ts).
 */
export async function dryRun(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  try {
    const { created } = await ctx.client.jobs.validate(fullResolution(job).candidate);
    return created ? await takeCreated(job, ctx, created) : job;
  } catch (err) {
    // The client already retried a 500 once.
    if (!isRefusal(err, { fiveHundred: true })) throw err;
    return { ...withFindings(job, apiDiagnostics(err, ctx.manifest, job.index)), outcome: 'refused' };
  }
}

/**
 * The dry run was answered with a job number (ValidateResult.created): the order is searched
 * for before anything is sent (settleDryRunJob). Found, it is that job, reported submitted with a
 * warning; not found, it goes on to its create; the search impossible, it is in doubt.
 */
async function takeCreated(
  job: JobState & { outcome: 'ready' },
  ctx: StageContext,
  named: JobCreateResponse,
): Promise<JobState> {
  const outcome = await settleDryRunJob(ctx.submit, submitRequest(job, ctx), named);
  if (outcome === undefined) return job;
  const next = withLedgerOutcome(job, outcome, ctx);
  if (outcome.status !== 'submitted') return next;
  const field = `jobs[${job.index}]`;
  const warning: Diagnostic = {
    severity: 'warning',
    code: 'api.validate-created',
    message:
      `the API answered a validateOnly dry run, which the spec says creates nothing, with job ` +
      `${named.jobNumber}, and the account has this order as job ${outcome.entry?.jobNumber}: it is taken ` +
      'as this order and not sent again',
    field,
    source: ctx.manifest.sources.locate(field),
  };
  return withFindings(next, [warning]);
}
