import { isError } from '../../manifest/diagnostics.js';
import { extend } from '../../core/extend.js';
import { resolveJob } from '../../resolve/resolve-job.js';
import { withFindings, type JobState } from '../job-state.js';
import type { StageContext } from './context.js';

/**
 * Resolve + preflight + estimate: human values to the API's codes through the account's
 * catalogue (one call per distinct value), the rules on the fetched definitions, the cost.
 */
export async function resolve(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'checked') return job;
  const resolved = await resolveJob(ctx.manifest, job.index, ctx.catalogue);
  const next = withFindings(job, resolved.diagnostics);
  if (resolved.diagnostics.some(isError)) return extend(next, { outcome: 'refused', resolved });
  return extend(next, { outcome: 'ready', resolved });
}
