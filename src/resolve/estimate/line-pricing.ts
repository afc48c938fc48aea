import type { PriceBand } from '../../api/types.js';
import { bandFor, money } from './price-band.js';
import type { LineEstimate } from './model.js';

/**
 * Everything needed to price one line, taken from the DTO the line resolved to. Kept
 * independent of the DTO types so the estimate never reaches back into the resolver.
 */
export interface LinePricing {
  index: number;
  quantity: number;
  /** The bands of the price code / asset / stock item; absent when the item is unknown. */
  priceBands?: readonly PriceBand[] | null;
  /** One-off setup for a new print (price code `standardSetup`; null = does not apply). */
  setup?: number | null;
  /** Per-rerun charge for a reorder (asset `reset`). */
  reset?: number | null;
  /** A sample line: priced at this unit price instead of the bands, with no setup. */
  samplePrice?: number | null;
  /** Why the line cannot be priced, when known in advance (unknown code, no pricing offered). */
  unpricedReason?: string;
  /**
   * Lines with the same key are one design (same code, attributes and artwork): the
   * estimate checks whether they would be cheaper as one line.
   */
  designKey?: string;
  /** The line's process, for promo codes that apply to some processes only. */
  processCode?: string;
}

/**
 * One line's estimate. Built as one object and added to (never spread into another): a run keeps
 * every line's estimate until it ends, and objects of the same keys then share a hidden class
 * (core/extend.ts).
 */
export function priceLine(p: LinePricing): LineEstimate {
  const base: LineEstimate = { index: p.index, quantity: p.quantity };
  if (p.setup != null && p.samplePrice === undefined) base.setup = p.setup;
  if (p.reset != null) base.reset = p.reset;
  if (p.unpricedReason !== undefined) {
    base.note = p.unpricedReason;
    return base;
  }

  let unitPrice: number | undefined;
  let note: string | undefined;
  if (p.samplePrice !== undefined) {
    if (p.samplePrice === null) note = 'no sample price offered';
    else {
      unitPrice = p.samplePrice;
      note = 'sample price';
    }
  } else {
    const band = bandFor(p.priceBands, p.quantity);
    if (band) unitPrice = band.unitPrice;
    else if (!p.priceBands || p.priceBands.length === 0) note = 'no price bands offered';
    else note = `no price band covers quantity ${p.quantity}`;
  }
  if (unitPrice !== undefined) {
    base.unitPrice = unitPrice;
    base.total = money(p.quantity * unitPrice + (base.setup ?? 0) + (base.reset ?? 0));
  }
  if (note) base.note = note;
  return base;
}
