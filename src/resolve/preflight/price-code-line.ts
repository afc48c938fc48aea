import type { PriceCodeDto } from '../../api/types.js';
import type { Diagnostic, ManifestItem, SourceMap } from '../../manifest/model.js';
import { quote } from '../../core/suggest.js';
import { checkAttributes, checkDimensions } from './attributes.js';
import { diagnostic } from './diagnostic.js';

/**
 * A PriceCode (new print) line against its price code: quantity at or above
 * `minimumQuantity` (samples bypass it, but only where a sample is offered), custom-size
 * dimensions, and the attributes. `base` is `jobs[j].items[i]`.
 *
 * What needs no account data (quantity and customerReference present, artwork URL on all
 * PriceCode lines or none) is checked earlier, by the manifest's local rules
 * (src/manifest/rules), and not repeated here.
 */
export function checkPriceCodeLine(
  item: ManifestItem,
  dto: PriceCodeDto,
  base: string,
  sources: SourceMap,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const code = quote(dto.priceCode ?? item.code);

  if (item.isSample === true && !dto.sampleAvailable) {
    out.push(
      diagnostic(
        sources,
        'error',
        'sample.unavailable',
        `${base}.isSample`,
        `${code} offers no sample: remove isSample or choose another code`,
      ),
    );
  }
  if (item.quantity !== undefined && item.isSample !== true && item.quantity < dto.minimumQuantity) {
    out.push(
      diagnostic(
        sources,
        'error',
        'quantity.below-minimum',
        `${base}.quantity`,
        `${item.quantity} is below the minimum quantity ${dto.minimumQuantity} of ${code}`,
      ),
    );
  }
  if (dto.hasMetaDataAttributes)
    out.push(...checkDimensions(item.attributes, dto.priceCode ?? item.code, base, sources));
  out.push(...checkAttributes(item.attributes, dto.attributes, dto.priceCode ?? item.code, base, sources));
  return out;
}
