/** An amount as people read it: two decimals and, when known, the account's currency (`1234.50 USD`). */
export function amountText(n: number, currency?: string): string {
  return currency ? `${n.toFixed(2)} ${currency}` : n.toFixed(2);
}
