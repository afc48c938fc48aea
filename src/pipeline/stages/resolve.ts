import { isError } from '../../manifest/diagnostics.js';
import { extend } from '../../core/extend.js';
import { resolveJob } from '../../resolve/resolve-job.js';
import type { JobList, Manifest } from '../../manifest/model.js';
import { type JobState, keptResolution, parkedJob, withFindings } from '../job-state.js';
import { contentKeyOf, sameContentKey } from '../guard-notes.js';
import { requestHash } from '../saved-plan.js';
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

/**
 * What a job keeps of its resolution once its plan stages are done (KeptResolution): an input
 * of many jobs then waits for its last dry run without every job's request in memory. A job
 * whose links were made from `artwork:` files keeps its resolution whole: its links were
 * presigned for it, and resolving it again would not make them. Given its input's manifest, a
 * ready job is parked in the input's JobTable (job-state.ts, parkedJob), where what it keeps
 * takes a fixed few bytes; the estimate keeps what is read of it later (total, currency).
 */
export function keepResolution(job: JobState, manifest?: Manifest<JobList>): JobState {
  const resolved = job.resolved;
  if (resolved === undefined || 'kept' in resolved || resolved.artworkKeys !== undefined) return job;
  const { total, currency } = resolved.estimate;
  const due = resolved.candidate.dateDue;
  const kept = {
    request: requestHash(resolved),
    content: contentKeyOf(resolved.candidate),
    estimate: { total, currency },
    ...(due === undefined ? {} : { dateDue: due }),
  };
  const parked = manifest === undefined ? undefined : parkedJob(job, manifest, kept);
  return parked ?? extend(job, { resolved: keptResolution(resolved.orderNumber, resolved.jobIndex, kept) });
}

/**
 * The stage before submit: a job that kept only its request's fingerprint is resolved again,
 * from the run's catalogue (which answers from what it fetched for the dry run; resolving is
 * pure apart from it), and goes on only with the very request its dry run validated. Anything
 * else is thrown: the job is then not processed, and nothing of it is sent (flow.ts).
 */
export async function resolveAgain(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready' || !('kept' in job.resolved)) return job;
  const kept = job.resolved;
  const resolved = await resolveJob(ctx.manifest, job.index, ctx.catalogue);
  if (resolved.diagnostics.some(isError) || requestHash(resolved) !== kept.request)
    throw new Error(
      `order ${JSON.stringify(job.orderNumber)}, resolved again to be sent, is not the request its dry run validated: not sent`,
    );
  sameContentKey(resolved.candidate, kept.content);
  return extend(job, { resolved });
}
