import { ApiError } from '../../api/errors.js';
import { apiDiagnostics } from '../api-diagnostics.js';
import { withFindings, type JobState } from '../job-state.js';
import type { StageContext } from './context.js';

/**
 * The API's own check of the exact request (`validateOnly`): what only the API can refuse is
 * found before anything is created. A refusal makes the job invalid; the API being
 * unavailable is thrown, and the job is then not processed (flow.ts).
 */
export async function dryRun(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  try {
    await ctx.client.jobs.validate(job.resolved.candidate);
    return job;
  } catch (err) {
    if (!isRefusal(err)) throw err;
    return { ...withFindings(job, apiDiagnostics(err, ctx.manifest, job.index)), outcome: 'refused' };
  }
}

/** A refusal of the job itself (its content), as opposed to the API being unavailable. */
function isRefusal(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.kind !== 'http' || err.status === null) return false;
  // validateOnly: a 500 "usually means an invalid payload" (spec); the client already retried it once.
  return (err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 429) || err.status === 500;
}
