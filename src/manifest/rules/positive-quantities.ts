import { formatPath } from '../field-path.js';
import type { ManifestJob } from '../model.js';
import { eachItem, isPositiveInteger, itemPath, adding, NOTHING, type Finding } from './rule.js';

/** Quantities are whole numbers ≥ 1; each size quantity a whole number ≥ 1 (zeros were dropped). */
export function positiveQuantities(job: ManifestJob, j: number): Finding[] {
  return eachItem(job, (item, i) => {
    // Arrays only when something is wrong: this runs for every item of the file.
    let findings: Finding[] | undefined;
    if (item.quantity !== undefined && !isPositiveInteger(item.quantity)) {
      findings = adding(findings, {
        code: 'quantity.invalid',
        field: itemPath(j, i, 'quantity'),
        message: `must be an integer ≥ 1, got ${JSON.stringify(item.quantity)}`,
      });
    }
    const sizes = item.sizeQuantities;
    if (sizes != null) {
      // Keys, not entries: no [size, n] array per size of every item.
      for (const size of Object.keys(sizes)) {
        const n = sizes[size];
        if (!isPositiveInteger(n)) {
          findings = adding(findings, {
            code: 'quantity.invalid',
            field: formatPath(['jobs', j, 'items', i, 'sizeQuantities', size]),
            message: `must be an integer ≥ 0, got ${JSON.stringify(n)}`,
          });
        }
      }
    }
    return findings ?? NOTHING;
  });
}
