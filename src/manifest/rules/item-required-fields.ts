import type { ManifestItem, ManifestJob } from '../model.js';
import { eachItem, itemPath, adding, NOTHING, type Finding } from './rule.js';

/** Fields each itemType must carry (the API rejects or mis-prices lines without them). */
export const REQUIRED_BY_ITEM_TYPE: Record<string, readonly (keyof ManifestItem)[]> = {
  PriceCode: ['code', 'quantity', 'customerReference'],
  Asset: ['code', 'quantity'],
  // variantCode may be left out: resolve finds it from a variant code in `code` or a single variant.
  Stock: ['code'],
};

/** The same, as a Map: looked up for every item of the file, where Object.hasOwn made V8 look the key up as a property name each time. */
const REQUIRED_BY_TYPE: ReadonlyMap<string, readonly (keyof ManifestItem)[]> = new Map(
  Object.entries(REQUIRED_BY_ITEM_TYPE),
);

export function itemRequiredFields(job: ManifestJob, j: number): Finding[] {
  return eachItem(job, (item, i) => {
    const type: unknown = item.itemType;
    const required =
      typeof type === 'string'
        ? REQUIRED_BY_TYPE.get(type)
        : Object.hasOwn(REQUIRED_BY_ITEM_TYPE, item.itemType)
          ? REQUIRED_BY_ITEM_TYPE[item.itemType]
          : undefined;
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
