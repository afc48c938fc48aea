import { formatPath } from '../field-path.js';
import type { ManifestItem, ManifestJob } from '../model.js';
import { adding, eachItem, isPositiveInteger, itemPath, NOTHING, type Finding } from './rule.js';

/** Fields each itemType must carry (the API rejects or mis-prices lines without them). */
const REQUIRED_BY_ITEM_TYPE: ReadonlyMap<unknown, readonly (keyof ManifestItem)[]> = new Map([
  ['PriceCode', ['code', 'quantity', 'customerReference']],
  ['Asset', ['code', 'quantity']],
  // variantCode may be left out: resolve finds it from a variant code in `code` or a single variant.
  ['Stock', ['code']],
]);

export function itemRequiredFields(job: ManifestJob, j: number): Finding[] {
  return eachItem(job, (item, i) => {
    const required = REQUIRED_BY_ITEM_TYPE.get(item.itemType);
    if (!required) {
      return [
        {
          code: 'item.type',
          field: itemPath(j, i, 'itemType'),
          message: `unknown itemType ${JSON.stringify(item.itemType)}; use PriceCode, Asset or Stock`,
        },
      ];
    }
    // Arrays only when something is missing: this runs for every item of the file.
    let findings: Finding[] | undefined;
    for (const f of required) {
      if (!isMissing(item[f])) continue;
      findings = adding(findings, {
        code: 'item.required',
        field: itemPath(j, i, f),
        message: `missing required field "${f}" (required for ${item.itemType} items)`,
      });
    }
    if (item.itemType === 'Stock' && item.sizeQuantities === undefined && item.quantity === undefined) {
      findings = adding(findings, {
        code: 'item.required',
        field: itemPath(j, i),
        message: 'needs "sizeQuantities" or "quantity" (Stock items)',
      });
    }
    return findings ?? NOTHING;
  });
}

function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

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
