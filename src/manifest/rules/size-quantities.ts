import type { ManifestJob } from '../model.js';
import { eachItem, itemPath, NOTHING, type Finding } from './rule.js';

/**
 * A Stock line's quantity comes from its sizes. When both are written they must agree, and
 * sizes that are all zero order nothing.
 */
export function sizeQuantitiesAgree(job: ManifestJob, j: number): readonly Finding[] {
  return eachItem(job, (item, i) => {
    const sizes = item.sizeQuantities;
    if (!sizes || typeof sizes !== 'object') return NOTHING;
    const keys = Object.keys(sizes);
    if (keys.length === 0) {
      return [
        {
          code: 'size-quantities.all-zero',
          field: itemPath(j, i, 'sizeQuantities'),
          message: 'every size quantity is zero; order at least one unit',
        },
      ];
    }
    let sum = 0;
    for (let k = 0; k < keys.length; k++) {
      const n = sizes[keys[k]];
      if (typeof n === 'number') sum += n;
    }
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
