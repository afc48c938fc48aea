import type { PriceBand } from '../../api/types.js';

/**
 * The band a quantity falls in: `from` ≤ quantity ≤ `to` (`to` null = open top band).
 * Undefined below the first band (under the minimum) or in a gap between bands.
 */
export function bandFor(bands: readonly PriceBand[] | null | undefined, quantity: number): PriceBand | undefined {
  if (!bands) return undefined;
  return bands.find((b) => quantity >= b.from && (b.to === null || quantity <= b.to));
}

/** Money rounded to cents, so float noise (0.1 + 0.2) never reaches a report. */
export function money(x: number): number {
  return Math.round(x * 100) / 100;
}
