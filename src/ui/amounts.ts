/**
 * Money as the dashboard shows it: always with its currency when the report recorded one
 * (`1,234.50 USD`), and summed per currency — amounts in different currencies are never added
 * together. An amount whose report did not record its currency (an older report, a job the
 * ledger vouched for) is summed apart, under ''.
 */

/** Sums per currency code; '' for amounts of unknown currency. */
export type Amounts = Map<string, number>;

export function addAmount(into: Amounts, currency: string | null, n: number | null): void {
  if (n === null) return;
  const key = currency ?? '';
  into.set(key, (into.get(key) ?? 0) + n);
}

export function addAmounts(into: Amounts, from: Amounts): void {
  for (const [currency, n] of from) addAmount(into, currency, n);
}

const NUMBER = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** `1,234.50 USD`; without a currency when none was recorded; `–` for none. */
export function money(n: number | null, currency: string | null = null): string {
  if (n === null) return '–';
  return currency ? `${NUMBER.format(n)} ${currency}` : NUMBER.format(n);
}

/** Each currency's sum, the largest first: `1,234.50 USD + 20.00 EUR`; `–` for none. */
export function moneyOf(a: Amounts | null | undefined): string {
  if (!a || a.size === 0) return '–';
  return [...a]
    .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
    .map(([currency, n]) => money(n, currency || null))
    .join(' + ');
}
