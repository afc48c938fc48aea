import type { Diagnostic, JobList, Manifest, ManifestJob, SourceMap } from '../model.js';
import { artworkUrls } from './artwork-url.js';
import { dueDate } from './due-date.js';
import { lostDigitFields, postalCodeZero, scientificOrderNumber } from './excel-damage.js';
import {
  countryCodeShape,
  deliveryMethodRequired,
  orderGroupSequence,
  orderNumberShape,
  sizeQuantitiesAgree,
  uniqueOrderNumber,
} from './job-fields.js';
import type { Finding, JobRule } from './rule.js';

const JOB_RULES: readonly JobRule[] = [
  // First: it repairs a ZIP's lost zero before the other rules look.
  postalCodeZero,
  scientificOrderNumber,
  lostDigitFields,
  orderNumberShape,
  sizeQuantitiesAgree,
  deliveryMethodRequired,
  countryCodeShape,
  dueDate,
  artworkUrls,
  orderGroupSequence,
];

/** Runs every local rule; jobs in `skipJobs` get only the manifest-wide one (unique order numbers). */
export function runLocalRules(manifest: Manifest<JobList>, skipJobs: ReadonlySet<number> = new Set()): Diagnostic[] {
  return runLocalRulesUpTo(manifest, skipJobs, Number.POSITIVE_INFINITY) as Diagnostic[];
}

/**
 * runLocalRules' findings, or undefined as soon as they are more than `most`: a reader that
 * would hold too many of them stops here and reads the input another way.
 */
export function runLocalRulesUpTo(
  manifest: Manifest<JobList>,
  skipJobs: ReadonlySet<number>,
  most: number,
): Diagnostic[] | undefined {
  const findings: Finding[] = uniqueOrderNumber(manifest);
  const jobs = manifest.jobs;
  for (let j = 0; j < jobs.length && findings.length <= most; j++)
    if (!skipJobs.has(j)) runJobRules(jobs.at(j) as ManifestJob, j, findings);
  if (findings.length > most) return undefined;
  return findings.map((f) => located(f, manifest.sources));
}

/**
 * The per-job rules on job `j` (numbered `j` in their findings), their findings added to
 * `into`. They may repair the job (a ZIP's lost zero): a job read again from its file goes
 * through them again (csv/job-view.ts).
 */
export function runJobRules(job: ManifestJob, j: number, into: Finding[]): void {
  for (const rule of JOB_RULES) {
    const found = rule(job, j);
    for (let f = 0; f < found.length; f++) into.push(found[f]);
  }
}

/** A finding as a diagnostic, at its field's location. */
export function located(f: Finding, sources: SourceMap): Diagnostic {
  return {
    severity: f.severity ?? 'error',
    code: f.code,
    message: f.message,
    field: f.field,
    source: sources.locate(f.field),
  };
}
