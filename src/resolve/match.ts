import type { Country, DeliveryOption, State } from '../api/types.js';
import { foldCase, suggest } from '../core/suggest.js';

/**
 * The outcome of matching a human value against an account's lookup list: the entry it
 * names, or nothing (with the closest entry's spelling to suggest, when one is close).
 */
export type Match<T> = { found: T } | { found?: undefined; suggestion?: string };

type Key<T> = (entry: T) => string;

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
  return {};
}

/**
 * Codes people write that ISO 3166 does not assign, mapped to the ISO2 they mean. "UK" is
 * the classic: the United Kingdom's alpha-2 code is GB.
 */
const ALIASES: Readonly<Record<string, string>> = { UK: 'GB' };

/**
 * A country as written (name, ISO2 or ISO3, any case, accents optional) → the lookup's
 * entry. Codes are tried before names and by length, so `NO` is Norway (ISO2), never the
 * word "no", and a three-letter code becomes its ISO2 instead of reaching the API.
 */
export function matchCountry(input: string, countries: readonly Country[]): Match<Country> {
  const text = input.trim();
  const upper = text.toUpperCase();
  const byCode =
    text.length === 2
      ? countries.find((c) => c.iso2.toUpperCase() === upper)
      : text.length === 3
        ? countries.find((c) => c.iso3.toUpperCase() === upper)
        : undefined;
  if (byCode) return { found: byCode };
  // No country is named like an alias, so the alias may come before the names.
  const byAlias = countries.find((c) => c.iso2 === ALIASES[upper]);
  if (byAlias) return { found: byAlias };
  // Fuzzy matching two-letter codes suggests nonsense (every code is one edit from dozens),
  // so only names are suggested.
  const name: Key<Country> = (c) => c.name;
  return matchFolded(text, countries, [name], [name]);
}

/** A state as written (name or abbreviation, any case, accents optional) → the lookup's entry. */
export function matchState(input: string, states: readonly State[]): Match<State> {
  const name: Key<State> = (s) => s.name;
  const abbreviation: Key<State> = (s) => s.abbreviation;
  return matchFolded(input, states, [abbreviation, name], [name, abbreviation]);
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
  return matchFolded(text, options, [code, label], [label, code]);
}
