import type { ManifestJob } from '../../manifest/model.js';
import { isError } from '../../manifest/diagnostics.js';
import { declarativeChanges } from '../apply-changes.js';
import { withFindings, type JobState } from '../job-state.js';
import type { StageContext } from './context.js';

/**
 * Declarative changes: run cancels or PATCHes a submitted job as the manifest now
 * asks; plan describes what run would do. A job not submitted yet with `cancel: true` is
 * refused here, so it is never submitted only to be cancelled.
 */
export async function applyChanges(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'checked' && job.outcome !== 'found') return job;
  const { manifest } = ctx;
  const changes = await declarativeChanges(
    {
      mode: ctx.mode,
      client: ctx.client,
      ledger: ctx.ledger,
      logger: ctx.logger,
      jobIndex: job.index,
      sources: manifest.sources,
      clock: ctx.clock,
      ...(ctx.beforeSend ? { beforeSend: ctx.beforeSend } : {}),
    },
    manifest.jobs.at(job.index) as ManifestJob,
    { hash: job.hash, submitted: job.outcome === 'found' ? job.ledger?.entry : undefined },
  );
  const next = withFindings(job, changes.diagnostics);
  const unavailable = next.unavailable || changes.state === 'unavailable';
  const refused = job.outcome === 'checked' && changes.diagnostics.some(isError);
  return refused ? { ...next, outcome: 'refused', unavailable } : { ...next, unavailable };
}
