import { nowDate } from '../../core/clock.js';
import type { Diagnostic } from '../../manifest/model.js';
import { artworkLifetime } from '../../resolve/preflight/artwork-lifetime.js';
import { diagnostic } from '../../resolve/preflight/diagnostic.js';
import { fullResolution, withFindings, type JobState } from '../job-state.js';
import type { StageContext } from './context.js';

/**
 * The artwork links of a job the printer will fetch (spec, "New-print artwork"): each signed
 * link must outlive the job's due date, and each link must answer with an image, a PDF or a
 * PostScript file from a host the printer can reach (api/artwork-probe.ts; every distinct link
 * once per run). Runs after resolve, so a job already refused costs no fetch.
 */
export async function checkArtwork(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  const mjob = ctx.manifest.jobs.at(job.index);
  if (!mjob || !Array.isArray(mjob.items)) return job;
  const { sources } = ctx.manifest;
  const now = nowDate(ctx.clock);
  const found: Diagnostic[] = [];
  await Promise.all(
    mjob.items.map(async (item, i) => {
      const link = item?.externalArtworkUrl;
      if (typeof link !== 'string') return;
      const field = `jobs[${job.index}].items[${i}].externalArtworkUrl`;
      const lifetime = artworkLifetime(link, fullResolution(job).candidate.dateDue ?? mjob.dateDue, now);
      if (lifetime) found.push(diagnostic(sources, lifetime.severity, lifetime.code, field, lifetime.message));
      if (!ctx.artwork || lifetime?.severity === 'error') return;
      const probe = await ctx.artwork.check(link);
      if (probe.ok) return;
      const severity = ctx.artwork.mode === 'on' ? 'error' : 'warning';
      found.push(diagnostic(sources, severity, probe.code, field, probe.message));
    }),
  );
  if (found.length === 0) return job;
  const next = withFindings(job, found);
  return found.some((d) => d.severity === 'error') ? { ...next, outcome: 'refused' } : next;
}
