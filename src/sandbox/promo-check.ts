import type { PromoValidationResult } from '../api/types.js';
import { PROMOS } from './data/promos.js';
import { DAY_MS } from './dates.js';

/**
 * Promo validation (GET /promocode/validate and POST /Jobs): exists, active, not expired,
 * usage not exceeded and, when process codes are given, applicable to at least one of them.
 * Codes match case-insensitively; the result echoes the canonical code.
 */
export function checkPromo(
  code: string,
  processCodes: string[] | null,
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
  if (processCodes && processCodes.length > 0 && def.processCodes) {
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

/** Which processes a promo discounts: null = all. */
export function promoProcesses(code: string): string[] | null {
  return PROMOS.find((p) => p.code.toUpperCase() === code.trim().toUpperCase())?.processCodes ?? null;
}
