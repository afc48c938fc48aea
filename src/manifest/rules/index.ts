import type { Diagnostic, Manifest } from '../model.js';
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
export function runLocalRules(manifest: Manifest, skipJobs: ReadonlySet<number> = new Set()): Diagnostic[] {
  const findings: Finding[] = uniqueOrderNumber(manifest);
  const jobs = manifest.jobs;
  for (let j = 0; j < jobs.length; j++) {
    if (skipJobs.has(j)) continue;
    for (const rule of JOB_RULES) {
      const found = rule(jobs[j], j);
      for (let f = 0; f < found.length; f++) findings.push(found[f]);
    }
  }
  return findings.map((f) => ({
    severity: f.severity ?? 'error',
    code: f.code,
    message: f.message,
    field: f.field,
    source: manifest.sources.locate(f.field),
  }));
}
