/**
 * The cost estimate shown before anything is sent. Money is in the account's currency
 * (the API converts nothing); every figure is what the price bands say, so the API's own
 * `totalJobCost` remains the authority once the job exists.
 */

export interface LineEstimate {
  /** The item's index in the job (same as in the manifest and the candidate). */
  index: number;
  /** Unit price of the band the quantity falls in; absent when it cannot be known. */
  unitPrice?: number;
  quantity: number;
  /** New prints: the price code's `standardSetup` (absent when null: setup does not apply). */
  setup?: number;
  /** Reorders: the asset's `reset`. */
  reset?: number;
  /** quantity × unitPrice + setup + reset; absent when the line cannot be priced. */
  total?: number;
  /** Why the line is unpriced, or how it was priced when that is not obvious. */
  note?: string;
}

export interface JobEstimate {
  lines: LineEstimate[];
  /**
   * Sum of the priced lines' totals, less `discount`. When `complete` is false it covers
   * only the priced lines; absent when no line could be priced.
   */
  total?: number;
  /** The valid promo code's discount, already taken off `total`; absent without a promo code. */
  discount?: number;
  /** True when every line was priced. */
  complete: boolean;
  /** The account's currency code, when the account profile gave one. */
  currency?: string;
}
