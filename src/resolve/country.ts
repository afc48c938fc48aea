import type { Country } from '../api/types.js';
import { foldCase, suggest } from '../core/suggest.js';
import type { Match } from './match.js';

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
  const folded = foldCase(text);
  const byName = countries.find((c) => foldCase(c.name) === folded);
  if (byName) return { found: byName };
  const alias = ALIASES[upper];
  const byAlias = alias === undefined ? undefined : countries.find((c) => c.iso2 === alias);
  if (byAlias) return { found: byAlias };

  // Fuzzy matching two-letter codes suggests nonsense (every code is one edit from dozens),
  // so only names are suggested.
  const suggestion = suggest(
    text,
    countries.map((c) => c.name),
  );
  return suggestion === undefined ? {} : { suggestion };
}
