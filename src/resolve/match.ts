import type { Country, DeliveryOption, State } from '../api/types.js';
import { countryCodeOf, countryNames, englishCountryName } from '../core/countries.js';
import { BoundedMemo } from '../core/bounded-memo.js';
import { foldAlnum, foldCase, nearest, suggest } from '../core/suggest.js';

/**
 * The outcome of matching a human value against an account's lookup list: the entry it
 * names, or nothing, with the closest entry's spelling to suggest when one is a near miss
 * (`suggestion`), else the entries nearest to it (`nearest`).
 */
export type Match<T> = { found: T } | { found?: undefined; suggestion?: string; nearest?: string[] };

/** A country the API's list lacks may still be one ISO 3166 knows: which, to say so. */
export type CountryMatch = Match<Country> | { found?: undefined; known: { iso2: string; name: string } };

type Key<T> = (entry: T) => string;

/** How many entries an unknown value is shown the nearest of. */
const NEAREST = 3;

/** The first entry whose key (each key in turn) folds like `text`; else the closest spelling of `suggestFrom`'s keys. */
function matchFolded<T>(text: string, entries: readonly T[], keys: Key<T>[], suggestFrom: Key<T>[]): Match<T> {
  const folded = foldCase(text);
  for (const key of keys) {
    const found = entries.find((e) => foldCase(key(e)) === folded);
    if (found) return { found };
  }
  for (const key of suggestFrom) {
    const suggestion = suggest(text, entries.map(key));
    if (suggestion !== undefined) return { suggestion };
  }
  return nearestOf(text, entries, (e) => suggestFrom.map((k) => k(e)), suggestFrom[0]);
}

/** `{ nearest }`: the entries nearest to `text` by any of their spellings, shown by `shown`. */
function nearestOf<T>(text: string, entries: readonly T[], spellings: (e: T) => string[], shown: Key<T>): Match<T> {
  const found = nearest(text, entries, spellings, NEAREST).map(shown);
  return found.length === 0 ? {} : { nearest: found };
}

/**
 * A run matches every job's country and state against the same few lists: the answers are kept
 * per list (an unknown value costs a scan of every spelling of every entry, once), a few
 * thousand at most, so a file of a million distinct misspellings stays small.
 */
const answers = new WeakMap<readonly object[], BoundedMemo<string, unknown>>();

function remembered<A>(list: readonly object[], text: string, answer: () => A): A {
  let known = answers.get(list);
  if (known === undefined) {
    known = new BoundedMemo(4096);
    answers.set(list, known);
  }
  return known.answer(text, answer) as A;
}

/**
 * A country as written → the lookup's entry: an ISO2 or ISO3 code of the list (`NO` is Norway,
 * never the word "no"; a three-letter code becomes its ISO2 instead of reaching the API), a
 * name of the list (any case, accents optional), else what the country names are in the
 * languages shops use (`Deutschland`, `U.S.A.`, `Great Britain`, `England`, `US-ME`) resolved to
 * its ISO2 and found in the list by it.
 */
export function matchCountry(input: string, countries: readonly Country[]): CountryMatch {
  const text = input.trim();
  return remembered(countries, text, () => countryOf(text, countries));
}

function countryOf(text: string, countries: readonly Country[]): CountryMatch {
  const upper = text.toUpperCase();
  const byCode =
    text.length === 2
      ? countries.find((c) => c.iso2.toUpperCase() === upper)
      : text.length === 3
        ? countries.find((c) => c.iso3.toUpperCase() === upper)
        : undefined;
  if (byCode) return { found: byCode };
  const folded = foldCase(text);
  const byName = countries.find((c) => foldCase(c.name) === folded);
  if (byName) return { found: byName };
  const iso2 = countryCodeOf(text);
  if (iso2 !== undefined) {
    const listed = countries.find((c) => c.iso2.toUpperCase() === iso2);
    if (listed) return { found: listed };
    return { known: { iso2, name: englishCountryName(iso2) ?? iso2 } };
  }
  // Fuzzy matching codes suggests nonsense (every two-letter code is one edit from dozens), so
  // only names are suggested: the list's own, and each listed country's names in other languages.
  const spellings = (c: Country): string[] => [c.name, ...countryNames(c.iso2)].filter((s) => foldAlnum(s).length > 3);
  const owners = countries.flatMap((c) => spellings(c).map((s) => ({ s, c })));
  const close = suggest(
    text,
    owners.map((o) => o.s),
  );
  if (close !== undefined) return { suggestion: (owners.find((o) => o.s === close) as { c: Country }).c.name };
  return nearestOf(text, countries, spellings, (c) => c.name);
}

/**
 * A state as written → the lookup's entry: its abbreviation or name (any case, accents
 * optional), or its ISO 3166-2 code, the country's ISO2 and the abbreviation (`US-ME` in the
 * United States is ME: the API's abbreviations for US, Canadian and Australian states are the
 * second part of their ISO 3166-2 codes). `iso2`: the country the states are of.
 */
export function matchState(input: string, states: readonly State[], iso2?: string): Match<State> {
  // One list of states is one country's: its iso2 is part of the question only when given.
  return remembered(states, `${iso2 ?? ''}\u0000${input}`, () => stateOf(input, states, iso2));
}

function stateOf(input: string, states: readonly State[], iso2: string | undefined): Match<State> {
  const name: Key<State> = (s) => s.name;
  const abbreviation: Key<State> = (s) => s.abbreviation;
  const m = matchFolded(input, states, [abbreviation, name], [name, abbreviation]);
  if (m.found !== undefined || iso2 === undefined) return m;
  const code = new RegExp(`^\\s*${iso2}[-\\s]+(\\S.*)$`, 'i').exec(input);
  if (code === null) return m;
  const found = states.find((s) => foldCase(s.abbreviation) === foldCase(code[1]));
  return found ? { found } : m;
}

/**
 * A delivery method as written (the option's code or its label, any case) → the option.
 * The API wants the code; people write "UPS Ground". An exact code wins over a label.
 */
export function matchDeliveryOption(input: string, options: readonly DeliveryOption[]): Match<DeliveryOption> {
  const text = input.trim();
  const exact = options.find((o) => o.code === text);
  if (exact) return { found: exact };
  const code: Key<DeliveryOption> = (o) => o.code;
  const label: Key<DeliveryOption> = (o) => o.label;
  const m = matchFolded(text, options, [code, label], [label, code]);
  if (m.found !== undefined || m.suggestion !== undefined) return m;
  const near = nearestOption(text, options);
  return near === undefined ? m : { ...m, nearest: [near.label] };
}

/**
 * Words that name one kind of delivery, folded: a shop's "Local Pickup" is the account's
 * "Customer Pickup", its "Next Day" an overnight service.
 */
const DELIVERY_KINDS: readonly (readonly string[])[] = [
  ['pickup', 'pick', 'collect', 'collection', 'willcall', 'will', 'call', 'local', 'store', 'abholung'],
  ['express', 'overnight', 'nextday', 'next', 'priority', 'urgent', 'rush', 'expedited', 'fast'],
  ['ground', 'standard', 'economy', 'regular', 'flat', 'rate', 'free', 'normal', 'versand', 'parcel'],
];

const words = (s: string): string[] =>
  foldCase(s)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');

/** The kinds a text's words name (indexes into DELIVERY_KINDS). */
function kindsOf(text: string): Set<number> {
  const out = new Set<number>();
  const ws = words(text);
  const joined = ws.join('');
  DELIVERY_KINDS.forEach((kind, k) => {
    if (ws.some((w) => kind.includes(w)) || kind.some((w) => w.length > 5 && joined.includes(w))) out.add(k);
  });
  return out;
}

/**
 * The account's option nearest to a shop's method name: the one naming the same kind of
 * delivery (`Local Pickup` → Customer Pickup, `Next Day` → FedEx Overnight, `Flat rate` → UPS
 * Ground), then sharing most words with it, else the nearest spelling. A suggestion for the
 * user to confirm in the deliveryMethods table, never used in its place.
 */
export function nearestOption(written: string, options: readonly DeliveryOption[]): DeliveryOption | undefined {
  if (options.length === 0) return undefined;
  const mine = new Set(words(written));
  const kinds = kindsOf(written);
  const scored = options.map((o, k) => {
    const theirs = words(`${o.label} ${o.code}`);
    const shared = theirs.filter((w) => mine.has(w)).length;
    const theirKinds = kindsOf(`${o.label} ${o.code}`);
    if (o.isCollection) theirKinds.add(0);
    const sameKind = [...kinds].filter((x) => theirKinds.has(x)).length;
    return { o, k, score: sameKind * 2 + shared };
  });
  scored.sort((a, b) => b.score - a.score || a.k - b.k);
  if (scored[0].score > 0) return scored[0].o;
  return nearest(written, options, (o) => [o.label, o.code], 1)[0];
}
