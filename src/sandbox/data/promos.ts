/** Promo codes. Expiry is relative to the sandbox clock's start, so the codes never go stale. */
interface PromoDef {
  code: string;
  description: string;
  /** Percentage, or cents when isFixed. */
  discount: number;
  isFixed: boolean;
  active: boolean;
  /** Days from the clock start; negative means already expired. */
  expiresInDays: number;
  /** Null when not process-specific. */
  processCodes: string[] | null;
  usageExceeded: boolean;
}

/** A percentage off every process, active, valid for a year and usable: what `other` changes. */
const promo = (code: string, description: string, discount: number, other: Partial<PromoDef> = {}): PromoDef => ({
  code,
  description,
  discount,
  isFixed: false,
  active: true,
  expiresInDays: 365,
  processCodes: null,
  usageExceeded: false,
  ...other,
});

export const PROMOS: readonly PromoDef[] = [
  promo('SPRING10', '10% off everything', 10),
  promo('WELCOME500', '$5.00 off your order', 500, { isFixed: true }),
  promo('EXPIRED20', '20% off (expired)', 20, { expiresInDays: -30 }),
  promo('DTFONLY15', '15% off DTF transfers', 15, { processCodes: ['DTF'] }),
  promo('RETIRED5', '5% off (deactivated)', 5, { active: false }),
  promo('LIMIT1', '25% off (usage limit reached)', 25, { usageExceeded: true }),
];
