import type { PriceBand } from '../../api/types.js';

export const round2 = (n: number): number => Math.round(n * 100) / 100;

/** The unit price for a quantity: the band whose [from, to] holds it, else the nearer end of the ladder. */
export function unitPriceFor(bands: readonly PriceBand[], quantity: number): number {
  if (bands.length === 0) return 0;
  const hit = bands.find((b) => quantity >= b.from && (b.to === null || quantity <= b.to));
  if (hit) return hit.unitPrice;
  return quantity < bands[0].from ? bands[0].unitPrice : bands[bands.length - 1].unitPrice;
}

/** The minimum orderable quantity of a ladder: the first band's `from` (never assumed 1). */
export const minimumOf = (bands: readonly PriceBand[]): number =>
  bands.length ? Math.min(...bands.map((b) => b.from)) : 1;
