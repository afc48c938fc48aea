import type { ManifestJob } from '../model.js';
import { eachItem, itemPath, NOTHING, type Finding } from './rule.js';

/**
 * A Stock line's quantity comes from its sizes. When both are written they must agree, and
 * sizes that are all zero order nothing.
 */
export function sizeQuantitiesAgree(job: ManifestJob, j: number): Finding[] {
  return eachItem(job, (item, i) => {
    if (!item.sizeQuantities || typeof item.sizeQuantities !== 'object') return NOTHING;
    const values = Object.values(item.sizeQuantities);
    if (values.length === 0) {
      return [
        {
          code: 'size-quantities.all-zero',
          field: itemPath(j, i, 'sizeQuantities'),
          message: 'every size quantity is zero; order at least one unit',
        },
      ];
    }
    const sum = values.reduce((a, n) => a + (typeof n === 'number' ? n : 0), 0);
    if (item.quantity !== undefined && item.quantity !== sum) {
      return [
        {
          code: 'size-quantities.sum-mismatch',
          field: itemPath(j, i, 'quantity'),
          message: `quantity ${item.quantity} does not match the sum of sizeQuantities (${sum}); give one or make them agree`,
        },
      ];
    }
    return NOTHING;
  });
}
