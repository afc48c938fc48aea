/**
 * "Did you mean" for every kind of unknown name or value: manifest keys and enum values, CSV
 * header names and mapping columns, countries, delivery methods, price codes, attribute names,
 * variants, sizes. One helper so that every message suggests the same way.
 *
 * Matching runs in tiers, best first, so an obvious near-miss always wins over a
 * merely close one:
 *   1. the same text ignoring case and accents        (`colors` → `Colors`, `Zurich` → `Zürich`)
 *   2. the same letters and digits ignoring the rest  (`order_number` → `orderNumber`,
 *                                                      `DTF Full Color 10x10` → `DTF Full Color 10" x 10"`)
 *   3. a known short form, when the caller has a table (`qty` → `quantity`)
 *   4. the one candidate that the input abbreviates   (`customerRef` → `customerReference`)
 *   5. a small edit distance on letters and digits    (`Colours` → `Colors`, `Untied States` → `United States`)
 *   6. optionally, one name inside the other          (`SHIP_NAME` → `NAME`)
 * Ties keep the candidates' own order, so callers decide precedence by how they list them.
 */

export interface SuggestOptions {
  /**
   * Largest edit distance accepted in tier 5, as a fraction of the longer string's length
   * (default 0.34: about one typo per three characters), never less than 1.
   */
  ratio?: number;
  /** Short forms people write, by their folded letters and digits (`qty`), to the name meant. */
  aliases?: Readonly<Record<string, string>>;
  /**
   * Whether a candidate containing the input, or contained in it, is a suggestion when nothing
   * is closer. Right for column names (`NAME` for `SHIP_NAME`), wrong for values (`DTF` is in
   * every DTF price code), hence off unless asked for.
   */
  containment?: boolean;
}

/** Shortest input (letters and digits) taken as an abbreviation of a longer name. */
const MIN_PREFIX = 4;
/** Shortest name (letters and digits) that tier 6 looks for inside another. */
const MIN_CONTAINED = 3;

/** Lower case, accents removed, whitespace collapsed: "Zürich  " → "zurich". */
export function foldCase(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/** Letters and digits only, folded: `DTF Full Color 10" x 10"` → "dtffullcolor10x10". */
export function foldAlnum(s: string): string {
  return foldCase(s).replace(/[^\p{L}\p{N}]/gu, '');
}

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions, so
 * `Untied` is one edit from `United`). Stops early once every path exceeds `max`.
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur: number[] = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, prev2[j - 2] + 1);
      }
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length];
}

/** The closest candidate to `input`, or undefined when none is close enough. */
export function suggest(input: string, candidates: Iterable<string>, opts: SuggestOptions = {}): string | undefined {
  const list = [...new Set(candidates)].filter((c) => c !== input);
  if (list.length === 0 || input.trim() === '') return undefined;

  const folded = foldCase(input);
  const byCase = list.find((c) => foldCase(c) === folded);
  if (byCase !== undefined) return byCase;

  // Without a letter or digit, only a case match above can be meant.
  const alnum = foldAlnum(input);
  if (alnum === '') return undefined;
  const others = list.map(foldAlnum);
  const byAlnum = others.indexOf(alnum);
  if (byAlnum >= 0) return list[byAlnum];

  const alias = opts.aliases?.[alnum];
  if (alias !== undefined && list.includes(alias)) return alias;

  if (alnum.length >= MIN_PREFIX) {
    const abbreviated = others.filter((o) => o.startsWith(alnum));
    if (abbreviated.length === 1) return list[others.indexOf(abbreviated[0])];
  }

  const ratio = opts.ratio ?? 0.34;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (let k = 0; k < list.length; k++) {
    const other = others[k];
    const limit = Math.max(1, Math.floor(Math.max(alnum.length, other.length) * ratio));
    const d = editDistance(alnum, other, Math.min(limit, bestDistance));
    if (d <= limit && d < bestDistance) {
      best = list[k];
      bestDistance = d;
    }
  }
  if (best !== undefined || opts.containment !== true || alnum.length < MIN_CONTAINED) return best;
  const k = others.findIndex((o) => o.length >= MIN_CONTAINED && (o.includes(alnum) || alnum.includes(o)));
  return k < 0 ? undefined : list[k];
}

/** ` (did you mean "X"?)` or the empty string: ready to append to a message about a value. */
export function didYouMean(input: string, candidates: Iterable<string>, opts?: SuggestOptions): string {
  const s = suggest(input, candidates, opts);
  return s === undefined ? '' : ` (did you mean ${quote(s)}?)`;
}

/** `; did you mean "x"?` or the empty string: ready to append to a message about a name (key, column). */
export function didYouMeanName(input: string, candidates: Iterable<string>, opts?: SuggestOptions): string {
  const s = suggest(input, candidates, opts);
  return s === undefined ? '' : `; did you mean "${s}"?`;
}

/**
 * Quotes a value for a message the way YAML would accept it back: price codes contain a
 * double quote (`DTF Full Color 10" x 10"`), so those get single quotes instead of escapes.
 */
export function quote(value: string): string {
  return value.includes('"') && !value.includes("'") ? `'${value}'` : `"${value}"`;
}

/**
 * Up to `n` candidates nearest to `input` by edit distance on letters and digits, nearest first
 * (ties in the candidates' order), however far: for a value that names nothing known, the
 * closest of what is known, where `suggest` finds no near miss. `names` gives each candidate's
 * spellings (all are compared; the candidate counts by its nearest).
 */
export function nearest<T>(input: string, candidates: readonly T[], names: (c: T) => readonly string[], n = 3): T[] {
  const alnum = foldAlnum(input);
  if (alnum === '') return [];
  const scored = candidates.map((c, k) => {
    let best = Number.POSITIVE_INFINITY;
    for (const name of names(c)) best = Math.min(best, editDistance(alnum, foldAlnum(name), best));
    return { c, k, best };
  });
  scored.sort((a, b) => a.best - b.best || a.k - b.k);
  return scored.slice(0, n).map((s) => s.c);
}
