import type { PromoValidationResult } from '../../api/types.js';
import type { Diagnostic, SourceMap } from '../../manifest/model.js';
import { money } from './price-band.js';
import { priceLine, type LinePricing } from './line-pricing.js';
import type { JobEstimate, LineEstimate } from './model.js';

/** A valid promo code's terms, as `GET /promocode/validate` states them. */
export type PromoTerms = Pick<PromoValidationResult, 'discount' | 'isFixed' | 'applicableProcessCodes'>;

export function estimateJob(lines: readonly LinePricing[], currency?: string, promo?: PromoTerms): JobEstimate {
  const priced: LineEstimate[] = lines.map(priceLine);
  const totals = priced.map((l) => l.total).filter((t): t is number => t !== undefined);
  const estimate: JobEstimate = { lines: priced, complete: totals.length === priced.length };
  if (totals.length > 0) {
    const subtotal = money(totals.reduce((a, b) => a + b, 0));
    const discount = promo ? promoDiscount(promo, lines, priced, subtotal) : 0;
    estimate.total = money(subtotal - discount);
    if (promo) estimate.discount = discount;
  }
  if (currency) estimate.currency = currency;
  return estimate;
}

/**
 * A fixed discount is in cents (never more than the order); a percentage applies to the
 * lines of the processes it names (`applicableProcessCodes`), or to every line when null.
 */
function promoDiscount(
  promo: PromoTerms,
  lines: readonly LinePricing[],
  priced: readonly LineEstimate[],
  subtotal: number,
): number {
  if (promo.isFixed) return money(Math.min(subtotal, promo.discount / 100));
  const only = promo.applicableProcessCodes;
  const base = priced.reduce((sum, l, i) => {
    const applies = !only || (lines[i].processCode !== undefined && only.includes(lines[i].processCode as string));
    return applies && l.total !== undefined ? sum + l.total : sum;
  }, 0);
  return money((base * promo.discount) / 100);
}

/**
 * The API charges two lines of one design more than one line of the combined quantity
 * (setup or reset twice, and a lower band each). Warn, with both costs, when combining
 * would be cheaper; the user may have split the lines on purpose (different references),
 * so this is never an error.
 */
export function combineWarnings(
  jobIndex: number,
  lines: readonly LinePricing[],
  estimates: readonly LineEstimate[],
  sources: SourceMap,
  currency?: string,
): Diagnostic[] {
  const groups = new Map<string, number[]>();
  lines.forEach((l, i) => {
    if (l.designKey === undefined || l.samplePrice !== undefined) return;
    const g = groups.get(l.designKey);
    if (g) g.push(i);
    else groups.set(l.designKey, [i]);
  });
  const out: Diagnostic[] = [];
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const separateTotals = members.map((i) => estimates[i].total);
    if (separateTotals.some((t) => t === undefined)) continue;
    const separate = money(separateTotals.reduce((a: number, b) => a + (b as number), 0));
    const first = lines[members[0]];
    const quantity = members.reduce((a, i) => a + lines[i].quantity, 0);
    const combined = priceLine({ ...first, quantity }).total;
    if (combined === undefined || combined >= separate) continue;
    const itemsText = members.map((i) => `items[${lines[i].index}]`).join(', ');
    const cur = currency ? ` ${currency}` : '';
    // One warning per group, at the first repeat: that is the line to merge away.
    const field = `jobs[${jobIndex}].items[${lines[members[1]].index}]`;
    out.push({
      severity: 'warning',
      code: 'estimate.combine-lines',
      message:
        `${itemsText} are one design: as separate lines they cost ${fmt(separate)}${cur}, ` +
        `as one line of ${quantity} they would cost ${fmt(combined)}${cur}`,
      field,
      source: sources.locate(field),
    });
  }
  return out;
}

function fmt(x: number): string {
  return x.toFixed(2);
}
