import pLimit from 'p-limit';
import type { ApiClient } from '../../api/client.js';
import { isNotFound } from '../../api/errors.js';
import type { ActiveJobDto } from '../../api/types.js';
import { errorText } from '../api-diagnostics.js';
import { needsDetail, type Observation } from './build-tracking.js';
import type { JobTracking } from '../../report/tracking-model.js';

export interface FetchOptions {
  /** Ask /Jobs/active for closed jobs too (`includeClosedJobs`). */
  includeClosed: boolean;
  /** Read GET /Jobs/{n} for every job, whatever needsDetail says. */
  details: boolean;
  concurrency: number;
  now: Date;
}

export interface FetchResult {
  observations: Map<number, Observation>;
  /** Some detail reads failed for reasons other than "not found" (network, 5xx). */
  incomplete: boolean;
}

/** Largest page the API allows for /Jobs/active. */
export const ACTIVE_PAGE_SIZE = 100;

/**
 * Reads the state of the given jobs with as few calls as possible (spec, Events: polling is
 * the way): `/Jobs/active` pages of 100, newest first — where recent orders are — stopping
 * as soon as every wanted job was seen, then `GET /Jobs/{n}` only where needsDetail says so.
 * A failure of /Jobs/active throws (nothing was learnt; the caller exits "unavailable").
 */
export async function fetchStates(
  client: ApiClient,
  wanted: ReadonlyMap<number, JobTracking | undefined>,
  opts: FetchOptions,
): Promise<FetchResult> {
  const active = new Map<number, ActiveJobDto>();
  if (wanted.size > 0) {
    // The client's paging: bounded, and an API fault when the pages do not move.
    const pages = client.jobs.iterateActive({
      pageSize: ACTIVE_PAGE_SIZE,
      ...(opts.includeClosed ? { includeClosedJobs: true } : {}),
    });
    for await (const job of pages) {
      if (wanted.has(job.jobNumber)) active.set(job.jobNumber, job);
      if (active.size === wanted.size) break;
    }
  }
  const observations = new Map<number, Observation>();
  const limit = pLimit(opts.concurrency);
  let incomplete = false;
  await Promise.all(
    [...wanted].map(([jobNumber, previous]) => {
      const a = active.get(jobNumber);
      const seen: Observation = a ? { active: a } : {};
      observations.set(jobNumber, seen);
      if (!opts.details && !needsDetail(a, previous, opts.now)) return undefined;
      return limit(async () => {
        try {
          seen.job = await client.jobs.get(jobNumber);
        } catch (err) {
          if (isNotFound(err)) seen.problem = `job ${jobNumber} was not found on this account`;
          else {
            incomplete = true;
            seen.problem = `job ${jobNumber} could not be read: ${errorText(err)}`;
          }
        }
      });
    }),
  );
  return { observations, incomplete };
}
