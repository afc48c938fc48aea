import { apiDiagnostics, isRefusal } from '../api-diagnostics.js';
import { fullResolution, withFindings, type JobState } from '../job-state.js';
import type { StageContext } from './context.js';

/**
 * The API's own check of the exact request (`validateOnly`): what only the API can refuse is
 * found before anything is created. A refusal makes the job invalid; the API being
 * unavailable is thrown, and the job is then not processed (flow.ts).
 */
export async function dryRun(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  try {
    await ctx.client.jobs.validate(fullResolution(job).candidate);
    return job;
  } catch (err) {
    // The client already retried a 500 once.
    if (!isRefusal(err, { fiveHundred: true })) throw err;
    return { ...withFindings(job, apiDiagnostics(err, ctx.manifest, job.index)), outcome: 'refused' };
  }
}
