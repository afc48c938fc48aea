/**
 * Cell text → document value. Conversions happen only when the text is unambiguous; anything
 * else stays the string it was, so schema validation reports it at its row and column with
 * the schema's own message (one validation path for YAML and CSV alike).
 */

const INTEGER = /^[+-]?\d+$/;

/** `"12"` → 12; `"12.5"`, `"ten"`, `"1e3"` stay strings. */
export function toInteger(text: string): number | string {
  // Quantities are short runs of digits: summed here, without a regular expression or Number().
  const length = text.length;
  if (length > 0 && length <= 9) {
    let value = 0;
    let i = 0;
    for (; i < length; i++) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      value = value * 10 + d;
    }
    if (i === length) return value;
  }
  if (!INTEGER.test(text)) return text;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/**
 * Yes and no as cells write them: true/false, yes/no, 1/0, and the words a spreadsheet writes for
 * TRUE and FALSE in its language (a German Excel saves WAHR/FALSCH, a French one VRAI/FAUX) and
 * for yes and no.
 */
const BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ...['true', 'yes', '1', 'y'].map((w) => [w, true] as const),
  ...['false', 'no', '0', 'n'].map((w) => [w, false] as const),
  // German, French, Spanish, Italian, Portuguese, Dutch, Swedish/Danish/Norwegian, Polish, Finnish.
  ...['wahr', 'ja', 'vrai', 'oui', 'verdadero', 'sí', 'si', 'vero', 'verdadeiro', 'sim', 'waar', 'sant', 'sand']
    .concat(['prawda', 'tak', 'tosi', 'kyllä'])
    .map((w) => [w, true] as const),
  ...['falsch', 'nein', 'faux', 'non', 'falso', 'não', 'nao', 'onwaar', 'nee', 'falskt', 'falsk', 'usant']
    .concat(['fałsz', 'nie', 'epätosi', 'ei'])
    .map((w) => [w, false] as const),
]);

/** Yes or no in any case and any of those languages; undefined when the text is neither. */
export function localisedBoolean(text: string): boolean | undefined {
  return BOOLEANS.get(text.toLowerCase());
}

/** A yes or no cell → boolean (localisedBoolean); anything else stays the string. */
export function toBoolean(text: string): boolean | string {
  const b = BOOLEANS.get(text.toLowerCase());
  return b === undefined ? text : b;
}

/** Leading/trailing blanks are not data (spreadsheets add them); avoids a copy when there are none. */
export function trimCell(raw: string): string {
  const n = raw.length;
  if (n === 0) return raw;
  return raw.charCodeAt(0) <= 32 || raw.charCodeAt(n - 1) <= 32 ? raw.trim() : raw;
}

export type SizesResult = { sizes: Record<string, number | string> } | { error: string };

/**
 * A `sizeQuantities` cell: `S=10;M=20` (blanks around parts allowed, a trailing `;` too).
 * A part without `=`, with an empty size or given twice is malformed; a non-integer
 * quantity is kept as text for the schema to report.
 */
export function parseSizes(text: string): SizesResult {
  const sizes: Record<string, number | string> = {};
  for (const rawPart of text.split(';')) {
    const part = rawPart.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq < 0) return { error: `"${part}" is not SIZE=QUANTITY (write sizeQuantities as S=10;M=20)` };
    const size = part.slice(0, eq).trim();
    const qty = part.slice(eq + 1).trim();
    if (size === '') return { error: `"${part}" has no size before "=" (write sizeQuantities as S=10;M=20)` };
    if (qty === '') return { error: `size ${size} has no quantity after "=" (write sizeQuantities as S=10;M=20)` };
    if (Object.hasOwn(sizes, size)) return { error: `size ${size} is given twice` };
    sizes[size] = toInteger(qty);
  }
  return { sizes };
}

/**
 * `s` as a string of its own. A cell is sliced out of the decoded text of a whole 64 KiB chunk
 * (fast-records.ts), and V8 makes a slice of 13 characters or more a view that keeps that
 * whole text alive: one kept name or street per chunk would keep the entire decoded file in
 * memory (peak RSS in `npm run bench:check`). Concatenating makes a new string, and reading a
 * character from it flattens it into one fresh copy (the garbage collector then drops the
 * wrapper); shorter slices are copies already.
 */
export function ownCopy(s: string): string {
  if (s.length < 13) return s;
  const copy = s[0] + s.slice(1);
  copy.charCodeAt(1);
  return copy;
}

/**
 * Keeps one copy of strings that repeat across a big file (codes, countries, methods), so a
 * million rows hold a few thousand distinct strings instead of a million copies (peak RSS in
 * `npm run bench:check`). Bounded, so a column of unique values cannot make the table itself
 * the memory problem.
 */
export class StringInterner {
  private readonly table = new Map<string, string>();
  constructor(private readonly limit = 100_000) {}

  intern(s: string): string {
    const seen = this.table.get(s);
    if (seen !== undefined) return seen;
    const own = ownCopy(s);
    if (this.table.size < this.limit) this.table.set(own, own);
    return own;
  }
}
