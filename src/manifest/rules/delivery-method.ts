import type { ManifestJob } from '../model.js';
import { NOTHING, type Finding } from './rule.js';

/** Every job ships somehow: deliveryMethod is required, on the job or in defaults. */
export function deliveryMethodRequired(job: ManifestJob, j: number): readonly Finding[] {
  const method = job.deliveryAddress?.deliveryMethod;
  if (typeof method === 'string' && method.trim() !== '') return NOTHING;
  return [
    {
      code: 'delivery-method.missing',
      field: `jobs[${j}].deliveryAddress.deliveryMethod`,
      message: 'missing deliveryMethod (a delivery option code or label, on the job or in defaults.deliveryAddress)',
    },
  ];
}
