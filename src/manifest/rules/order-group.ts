import type { ManifestJob } from '../model.js';
import { NOTHING, type Finding } from './rule.js';

/** orderGroupSequence is a position within an orderGroup; alone it links nothing. */
export function orderGroupSequence(job: ManifestJob, j: number): readonly Finding[] {
  if (job.orderGroupSequence === undefined || job.orderGroup !== undefined) return NOTHING;
  return [
    {
      code: 'order-group.sequence-without-group',
      field: `jobs[${j}].orderGroupSequence`,
      message: 'orderGroupSequence needs an orderGroup',
    },
  ];
}
