import { isApiError } from '../api/errors.js';
import type {
  AssetDto,
  AssetLineRequest,
  JobLineRequest,
  PriceCodeDto,
  PriceCodeLineRequest,
  StockItem,
  StockLineRequest,
} from '../api/types.js';
import type { Diagnostic, ManifestItem, SourceMap } from '../manifest/model.js';
import type { LinePricing } from './estimate/line-pricing.js';
import { checkAssetLine } from './preflight/asset-line.js';
import { DG_X, DG_Y } from './preflight/attributes.js';
import { diagnostic } from './preflight/diagnostic.js';
import { checkPriceCodeLine } from './preflight/price-code-line.js';
import { checkStockLine } from './preflight/stock-line.js';
import { didYouMean, quote } from '../core/suggest.js';
import type { AccountCatalogue } from './catalogue.js';

export interface ResolvedItem {
  /** The line to send, in the API's field names. */
  line: JobLineRequest;
  diagnostics: Diagnostic[];
  /** What the estimate needs to price the line; its processCode also serves the ship date and promo. */
  pricing: LinePricing;
}

/**
 * One manifest item → the line to send plus its catalogue checks. `base` is
 * `jobs[j].items[i]`; `index` is i (lines keep the manifest's order: the API adds them in
 * the order supplied, and reports map results back by index).
 */
export async function resolveItem(
  item: ManifestItem,
  base: string,
  index: number,
  catalogue: AccountCatalogue,
  sources: SourceMap,
  preset?: string,
): Promise<ResolvedItem> {
  switch (item.itemType) {
    case 'PriceCode':
      return resolvePriceCodeItem(item, base, index, catalogue, sources);
    case 'Asset':
      return resolveAssetItem(item, base, index, catalogue, sources, preset);
    case 'Stock':
      return resolveStockItem(item, base, index, catalogue, sources, preset);
    default:
      // Other line types exist (bill of material, external garment) but the spec does not
      // show their itemType values: send as written, unchecked, and say so.
      return {
        line: { ...item } as JobLineRequest,
        diagnostics: [
          diagnostic(
            sources,
            'warning',
            'itemType.unchecked',
            `${base}.itemType`,
            `itemType ${quote(item.itemType)} is not checked before sending; the API will judge it`,
          ),
        ],
        pricing: {
          index,
          quantity: item.quantity ?? 0,
          unpricedReason: `itemType ${item.itemType} cannot be estimated`,
        },
      };
  }
}

/** DG-X / DG-Y attributes as numbers, when both are present and numeric. */
export function dimensionsOf(
  attributes: Readonly<Record<string, string>> | undefined,
): { dgX: number; dgY: number } | undefined {
  const x = attributes?.[DG_X];
  const y = attributes?.[DG_Y];
  if (x === undefined || y === undefined || String(x).trim() === '' || String(y).trim() === '') return undefined;
  const dgX = Number(x);
  const dgY = Number(y);
  return Number.isFinite(dgX) && Number.isFinite(dgY) ? { dgX, dgY } : undefined;
}

async function resolvePriceCodeItem(
  item: ManifestItem,
  base: string,
  index: number,
  catalogue: AccountCatalogue,
  sources: SourceMap,
): Promise<ResolvedItem> {
  const line: PriceCodeLineRequest = pick({ itemType: 'PriceCode', code: item.code }, item, [
    'quantity',
    'customerReference',
    'groupHead',
    'group',
    'attributes',
    'externalArtworkUrl',
    'externalId',
    'isSample',
  ]);
  const quantity = item.quantity ?? 0;
  const codeField = `${base}.code`;
  const dims = dimensionsOf(item.attributes);

  let dto: PriceCodeDto | undefined;
  try {
    dto = await catalogue.priceCode(item.code, dims);
  } catch (err) {
    // Without dimensions, the likeliest refusal is a custom-size code asking for them.
    const hint = dims ? '' : ` (a custom-size code needs its width and height as attributes ${DG_X} and ${DG_Y})`;
    const refused = rejection(err, codeField, `to price ${quote(item.code)}`, sources, hint);
    if (!refused) throw err;
    return unpriced(line, refused, index, quantity, 'the API refused to price this code');
  }
  if (!dto) {
    // Only now is the list worth fetching: once per run, to suggest the account's spelling.
    const listed = (await catalogue.priceCodeList()).map((p) => p.priceCode).filter((c): c is string => c !== null);
    const message = `${quote(item.code)} is not a price code of this account${didYouMean(item.code, listed)}`;
    const unknown = diagnostic(sources, 'error', 'priceCode.unknown', codeField, message);
    return unpriced(line, unknown, index, quantity, 'unknown price code');
  }
  if (dto.priceCode) line.code = dto.priceCode; // the API's own spelling
  const diagnostics = checkPriceCodeLine(item, dto, base, sources);
  const pricing: LinePricing = {
    index,
    quantity,
    ...(dto.processCode ? { processCode: dto.processCode } : {}),
    priceBands: dto.priceBands,
    setup: dto.standardSetup,
    designKey: JSON.stringify([
      'PriceCode',
      dto.priceCode ?? item.code,
      sortedEntries(item.attributes),
      item.externalArtworkUrl ?? item.artwork ?? null,
    ]),
  };
  if (item.isSample === true) pricing.samplePrice = dto.samplePrice ?? null;
  if (dto.hasMetaDataAttributes && !dims) pricing.unpricedReason = 'a custom size needs DG-X and DG-Y to be priced';
  return { line, diagnostics, pricing };
}

async function resolveAssetItem(
  item: ManifestItem,
  base: string,
  index: number,
  catalogue: AccountCatalogue,
  sources: SourceMap,
  preset?: string,
): Promise<ResolvedItem> {
  const line: AssetLineRequest = pick({ itemType: 'Asset', code: item.code }, item, [
    'quantity',
    'customerReference',
    'groupHead',
    'group',
    'garment',
    'comment',
  ]);
  const quantity = item.quantity ?? 0;
  const codeField = `${base}.code`;
  let asset: AssetDto | undefined;
  try {
    asset = await catalogue.asset(item.code);
  } catch (err) {
    const refused = rejection(err, codeField, `asset ${quote(item.code)}`, sources);
    if (!refused) throw err;
    return unpriced(line, refused, index, quantity, 'the API refused this asset');
  }
  if (!asset) {
    // Only for an unknown tag: one filtered list call, to catch case slips (`a10001`).
    const hint = didYouMean(item.code, await catalogue.assetTagsLike(item.code));
    const message = `no asset ${quote(item.code)} on this account${hint}${skuTableHint(preset, sources, codeField)}`;
    return unpriced(
      line,
      diagnostic(sources, 'error', 'asset.unknown', codeField, message),
      index,
      quantity,
      'unknown asset',
    );
  }
  if (asset.assetTag) line.code = asset.assetTag;
  return {
    line,
    diagnostics: checkAssetLine(item, asset, base, sources),
    pricing: {
      index,
      quantity,
      ...(asset.processCode ? { processCode: asset.processCode } : {}),
      priceBands: asset.priceBands,
      reset: asset.reset,
      designKey: JSON.stringify(['Asset', asset.assetTag ?? item.code, item.garment ?? null]),
    },
  };
}

async function resolveStockItem(
  item: ManifestItem,
  base: string,
  index: number,
  catalogue: AccountCatalogue,
  sources: SourceMap,
  preset?: string,
): Promise<ResolvedItem> {
  const line: StockLineRequest = pick({ itemType: 'Stock', code: item.code }, item, [
    'customerReference',
    'groupHead',
    'group',
    'variantCode',
    'sizeQuantities',
  ]);
  const sum = Object.values(item.sizeQuantities ?? {}).reduce((a, b) => a + b, 0);
  line.quantity = sum;
  const codeField = `${base}.code`;
  let stock: StockItem | undefined;
  try {
    stock = await catalogue.stock(item.code);
  } catch (err) {
    const refused = rejection(err, codeField, `stock code ${quote(item.code)}`, sources);
    if (!refused) throw err;
    return unpriced(line, refused, index, sum, 'the API refused this stock code');
  }
  if (!stock) {
    const unknown = diagnostic(
      sources,
      'error',
      'stock.unknown',
      codeField,
      `no stock item ${quote(item.code)} for this account${skuTableHint(preset, sources, codeField)}`,
    );
    return unpriced(line, unknown, index, sum, 'unknown stock code');
  }
  const check = checkStockLine(item, stock, base, sources);
  line.code = stock.stockCode;
  if (check.variantCode !== undefined) line.variantCode = check.variantCode;
  if (check.sizeQuantities !== undefined) line.sizeQuantities = check.sizeQuantities;
  line.quantity = check.quantity;
  const bands = stock.priceBands;
  return {
    line,
    diagnostics: check.diagnostics,
    pricing: {
      index,
      quantity: check.quantity,
      ...(stock.processCode ? { processCode: stock.processCode } : {}),
      priceBands: bands,
      ...(bands && bands.length > 0 ? {} : { unpricedReason: 'the API offers no price for this stock item' }),
    },
  };
}

/**
 * For a code a preset read out of a shop's SKU column: how the preset reads SKUs, and the SKU
 * table that maps a shop's own SKUs to the account's codes (docs/mappings.md#the-shops-own-skus).
 * Empty for a code written in a manifest or read by the user's own mapping.
 */
function skuTableHint(preset: string | undefined, sources: SourceMap, field: string): string {
  const column = sources.locate(field).columnName;
  if (preset === undefined || column === undefined) return '';
  return (
    `; the ${preset} preset takes the code from the start of the SKU in ${quote(column)}: if the shop's SKUs ` +
    `are its own, map each to the account's code in a SKU table (a mapping with \`extends: ${preset}\` and a ` +
    'skus lookup, docs/mappings.md#the-shops-own-skus)'
  );
}

/** A line the catalogue could not price (unknown or refused): sent as built, with its one finding. */
function unpriced(
  line: JobLineRequest,
  finding: Diagnostic,
  index: number,
  quantity: number,
  why: string,
): ResolvedItem {
  return { line, diagnostics: [finding], pricing: { index, quantity, unpricedReason: why } };
}

/**
 * A 400 on a lookup is the API refusing the value itself (an over-long code, a custom size
 * without its dimensions): a problem with the manifest, so a diagnostic carrying the
 * API's words. Anything else is not ours to judge: undefined, and the caller rethrows.
 */
function rejection(err: unknown, field: string, what: string, sources: SourceMap, hint = ''): Diagnostic | undefined {
  if (!isApiError(err) || err.kind !== 'http' || err.status !== 400) return undefined;
  // Field errors say what is wrong; the RFC 7807 detail is often only "validation errors occurred".
  const fieldErrors = Object.values(err.errors ?? {}).flat();
  const why = fieldErrors.length > 0 ? fieldErrors.join('; ') : (err.detail ?? err.title ?? '');
  return diagnostic(
    sources,
    'error',
    'api.lookup-refused',
    field,
    `the API refused ${what}${why ? `: ${why}` : ''}${hint}`,
  );
}

/** `target` plus those of `keys` that `item` has (defined): the candidate gets no stray keys. */
function pick<T extends object>(target: T, item: ManifestItem, keys: readonly (keyof ManifestItem)[]): T {
  const out = target as Record<string, unknown>;
  for (const k of keys) if (item[k] !== undefined) out[k] = item[k];
  return target;
}

function sortedEntries(attrs: Readonly<Record<string, string>> | undefined): [string, string][] {
  return Object.entries(attrs ?? {})
    .map(([k, v]): [string, string] => [k, String(v)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
