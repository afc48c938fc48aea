import type { AssetDto } from '../../api/types.js';
import type { Diagnostic, ManifestItem, SourceMap } from '../../manifest/model.js';
import { diagnostic } from './diagnostic.js';

/**
 * An Asset (reorder) line: the asset must not be archived (an archived asset cannot be
 * reordered), and the quantity must reach its first price band.
 */
export function checkAssetLine(item: ManifestItem, asset: AssetDto, base: string, sources: SourceMap): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (asset.isArchived) {
    out.push(
      diagnostic(
        sources,
        'error',
        'asset.archived',
        `${base}.code`,
        `asset ${item.code} is archived and cannot be reordered`,
      ),
    );
  }
  // The first band's `from` is the minimum orderable quantity (never assumed to be 1).
  const minimum = asset.priceBands.length > 0 ? Math.min(...asset.priceBands.map((b) => b.from)) : undefined;
  if (minimum !== undefined && item.quantity !== undefined && item.quantity < minimum) {
    out.push(
      diagnostic(
        sources,
        'error',
        'quantity.below-minimum',
        `${base}.quantity`,
        `${item.quantity} is below the minimum quantity ${minimum} of asset ${item.code}`,
      ),
    );
  }
  return out;
}
