import type { ManifestJob } from '../model.js';
import { NOTHING, type Finding } from './rule.js';

/** The API answers an empty items list with a 500, so it is caught here. */
export function nonEmptyItems(job: ManifestJob, j: number): readonly Finding[] {
  if (Array.isArray(job.items) && job.items.length > 0) return NOTHING;
  return [{ code: 'items.empty', field: `jobs[${j}].items`, message: 'a job needs at least one item' }];
}
