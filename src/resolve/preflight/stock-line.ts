import type { StockItem, StockVariant } from '../../api/types.js';
import type { Diagnostic, ManifestItem, SourceMap } from '../../manifest/model.js';
import { didYouMean, quote } from '../../core/suggest.js';
import { childPath } from '../../manifest/field-path.js';
import { diagnostic } from './diagnostic.js';

export interface StockLineCheck {
  diagnostics: Diagnostic[];
  /** The variant to send: as written, or the one the code itself names, or the only one. */
  variantCode?: string;
  /** The sizes to send: as written, or `{ Qty: quantity }` for equipment given only a quantity. */
  sizeQuantities?: Record<string, number>;
  /** The line's quantity as the API computes it: the sum of the size quantities. */
  quantity: number;
}

/** The sizes of a variant's run (`sizesCsv`), in order. Equipment has the single size `Qty`. */
export function sizesOf(variant: StockVariant): string[] {
  return variant.sizesCsv
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * A Stock line against its stock item: a known variant, size keys within that variant's
 * run (an unknown key is one of the API's documented 500s), and quantity = the sum of the
 * sizes (the API ignores a Stock line's own quantity). Equipment (the single size `Qty`)
 * may be written with just a quantity. Whether quantity and sizes agree needs no account
 * data and is the check stage's rule (src/manifest/rules), not repeated here.
 */
export function checkStockLine(item: ManifestItem, stock: StockItem, base: string, sources: SourceMap): StockLineCheck {
  const error = (code: string, field: string, message: string): Diagnostic =>
    diagnostic(sources, 'error', code, field, message);
  const out: Diagnostic[] = [];
  const variant = chooseVariant(item, stock, base, error, out);
  const run = variant ? sizesOf(variant) : undefined;
  const written = item.sizeQuantities;
  const equipment = run?.length === 1 && run[0] === 'Qty';
  const sizes =
    (written === undefined || Object.keys(written).length === 0) && item.quantity !== undefined && equipment
      ? { Qty: item.quantity }
      : written;
  const quantity = Object.values(sizes ?? {}).reduce((a, b) => a + b, 0);
  if (sizes === undefined || Object.keys(sizes).length === 0) {
    const known = run ? ` (sizes: ${run.join(', ')})` : '';
    out.push(error('stock.sizes-missing', `${base}.sizeQuantities`, `a Stock line needs sizeQuantities${known}`));
  } else {
    for (const key of Object.keys(sizes)) {
      if (!variant || !run || run.includes(key)) continue;
      out.push(
        error(
          'stock.size-unknown',
          childPath(`${base}.sizeQuantities`, key),
          `${quote(key)} is not a size of ${variant.variantCode}${didYouMean(key, run)}; its sizes are: ${run.join(', ')}`,
        ),
      );
    }
    if (quantity <= 0) {
      out.push(
        error('stock.quantity-zero', `${base}.sizeQuantities`, 'the sizeQuantities of this Stock line add up to 0'),
      );
    }
  }
  return {
    diagnostics: out,
    ...(variant ? { variantCode: variant.variantCode } : {}),
    ...(sizes ? { sizeQuantities: sizes } : {}),
    quantity,
  };
}

/**
 * The variant a Stock line names, else the one its code names (GET /Stock/{code} accepts a
 * variant code too), else the only one; none is an error.
 */
function chooseVariant(
  item: ManifestItem,
  stock: StockItem,
  base: string,
  error: (code: string, field: string, message: string) => Diagnostic,
  out: Diagnostic[],
): StockVariant | undefined {
  const variants = stock.stockVariants ?? [];
  const codes = variants.map((v) => v.variantCode);
  if (item.variantCode !== undefined) {
    const variant = variants.find((v) => v.variantCode === item.variantCode);
    if (!variant) {
      out.push(
        error(
          'stock.variant-unknown',
          `${base}.variantCode`,
          `${stock.stockCode} has no variant ${quote(item.variantCode)}${didYouMean(item.variantCode, codes)}; its variants are: ${codes.join(', ')}`,
        ),
      );
    }
    return variant;
  }
  const variant =
    variants.find((v) => v.variantCode === item.code) ?? (variants.length === 1 ? variants[0] : undefined);
  if (!variant) {
    out.push(
      error(
        'stock.variant-missing',
        `${base}.variantCode`,
        `${stock.stockCode} needs a variantCode, one of: ${codes.join(', ')}`,
      ),
    );
  }
  return variant;
}
