/**
 * "Did you mean …?" for header names and mapping keys. Header names are case-sensitive like
 * YAML keys, so the commonest mistakes are case (`Organisation`), separators (`order_number`),
 * short forms (`qty`) and typos; each is tried in that order.
 */

/** Common short forms people put in CSV headers, normalised (lower case, letters and digits only). */
const ALIASES: Record<string, string> = {
  qty: 'quantity',
  quantityordered: 'quantity',
  sku: 'code',
  itemcode: 'code',
  assettag: 'code',
  pricecode: 'code',
  type: 'itemType',
  po: 'orderNumber',
  ponumber: 'orderNumber',
  order: 'orderNumber',
  orderno: 'orderNumber',
  duedate: 'dateDue',
  shipvia: 'deliveryMethod',
  shippingmethod: 'deliveryMethod',
  method: 'deliveryMethod',
  zip: 'postalCode',
  zipcode: 'postalCode',
  postcode: 'postalCode',
  address: 'streetAddress',
  address1: 'streetAddress',
  street: 'streetAddress',
  email: 'emailAddress',
  organization: 'organisation',
  company: 'organisation',
  contact: 'contactName',
  name: 'contactName',
  variant: 'variantCode',
  sizes: 'sizeQuantities',
  reference: 'customerReference',
  artworkurl: 'externalArtworkUrl',
  countrycode: 'countryCodeISO2',
  iso2: 'countryCodeISO2',
  province: 'state',
};

function normalise(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Levenshtein distance, small strings only (header names). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** The candidate the user most likely meant by `name`, or undefined when nothing is close. */
export function suggest(name: string, candidates: Iterable<string>, opts: { aliases?: boolean } = {}): string | undefined {
  const list = [...candidates];
  const lower = name.toLowerCase();
  const exactCase = list.find((c) => c.toLowerCase() === lower);
  if (exactCase !== undefined) return exactCase;
  const norm = normalise(name);
  if (norm === '') return undefined;
  const sameLetters = list.find((c) => normalise(c) === norm);
  if (sameLetters !== undefined) return sameLetters;
  if (opts.aliases !== false) {
    const alias = ALIASES[norm];
    if (alias !== undefined && list.includes(alias)) return alias;
  }
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of list) {
    const d = editDistance(norm, normalise(c));
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  // Allow roughly one typo per four letters, and at least two: `quantiy`, `cuntry`, `QTY_XXL`.
  if (bestDistance <= Math.max(2, Math.floor(norm.length / 4))) return best;
  // Else one name inside the other: `postal` → `postalCode`, `NAME` → `SHIP_NAME`.
  if (norm.length >= 3) {
    return list.find((c) => {
      const n = normalise(c);
      return n.length >= 3 && (n.includes(norm) || norm.includes(n));
    });
  }
  return undefined;
}

/** `; did you mean "x"?` or nothing. */
export function didYouMean(name: string, candidates: Iterable<string>, opts?: { aliases?: boolean }): string {
  const s = suggest(name, candidates, opts);
  return s === undefined ? '' : `; did you mean "${s}"?`;
}
