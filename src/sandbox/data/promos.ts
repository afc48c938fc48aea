import type { PromoValidationResult } from '../../api/types.js';
import { DAY_MS } from '../dates.js';

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

const PROMOS: readonly PromoDef[] = [
  promo('SPRING10', '10% off everything', 10),
  promo('WELCOME500', '$5.00 off your order', 500, { isFixed: true }),
  promo('EXPIRED20', '20% off (expired)', 20, { expiresInDays: -30 }),
  promo('DTFONLY15', '15% off DTF transfers', 15, { processCodes: ['DTF'] }),
  promo('RETIRED5', '5% off (deactivated)', 5, { active: false }),
  promo('LIMIT1', '25% off (usage limit reached)', 25, { usageExceeded: true }),
];

/**
 * Promo validation (GET /promocode/validate and POST /Jobs): exists, active, not expired,
 * usage not exceeded and, when process codes are given, applicable to at least one of them.
 * Codes match case-insensitively; the result echoes the canonical code.
 */
export function checkPromo(
  code: string,
  processCodes: string[],
  nowMs: number,
  clockStartMs: number,
): PromoValidationResult {
  const def = PROMOS.find((p) => p.code.toUpperCase() === code.trim().toUpperCase());
  const invalid = (message: string): PromoValidationResult => ({
    isValid: false,
    promoCode: def?.code ?? code,
    description: def?.description ?? null,
    discount: def?.discount ?? 0,
    isFixed: def?.isFixed ?? false,
    message,
    applicableProcessCodes: null,
  });
  if (!def) return invalid('Promo code not found.');
  if (!def.active) return invalid('Promo code is not active.');
  if (nowMs > clockStartMs + def.expiresInDays * DAY_MS) return invalid('Promo code has expired.');
  if (def.usageExceeded) return invalid('Promo code has reached its usage limit.');
  let applicable: string[] | null = null;
  if (processCodes.length > 0 && def.processCodes) {
    applicable = processCodes.filter((p) => def.processCodes?.includes(p.toUpperCase()));
    if (applicable.length === 0) return invalid(`Promo code applies only to process ${def.processCodes.join(', ')}.`);
  }
  return {
    isValid: true,
    promoCode: def.code,
    description: def.description,
    discount: def.discount,
    isFixed: def.isFixed,
    message: 'Promo code is valid.',
    applicableProcessCodes: applicable,
  };
}
