import type { JobResult, JobStatus } from './model.js';
import { jobErrors } from './write-errors-txt.js';

/** A job's status, estimate, and whether it has errors (its own or its items') or warnings of its own. */
export interface JobGlance {
  status: JobStatus;
  estimatedCost: number | null;
  errors: boolean;
  warnings: boolean;
}

/** The glance of a job at hand. */
export function glanceOf(job: JobResult): JobGlance {
  return {
    status: job.status,
    estimatedCost: job.estimatedCost,
    errors: !jobErrors(job).next().done,
    warnings: job.warnings.length > 0,
  };
}

/** Where a report's `jobs` (a spooled report's view) can glance at a job without reading it. */
const glances = new WeakMap<readonly JobResult[], (j: number) => JobGlance | undefined>();

/** Lets glanceAt ask `glance` about the jobs of `jobs`. */
export function glanceThrough(jobs: readonly JobResult[], glance: (j: number) => JobGlance | undefined): void {
  glances.set(jobs, glance);
}

/**
 * What a summary needs of job `j` of a report's `jobs` without reading the job: a spooled
 * report's ended job (a read parses its text again). Undefined for any other job: read it
 * (glanceOf).
 */
export function glanceAt(jobs: readonly JobResult[], j: number): JobGlance | undefined {
  return glances.get(jobs)?.(j);
}
