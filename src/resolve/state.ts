import type { State } from '../api/types.js';
import { foldCase, suggest } from '../core/suggest.js';
import type { Match } from './match.js';

/** A state as written (name or abbreviation, any case, accents optional) → the lookup's entry. */
export function matchState(input: string, states: readonly State[]): Match<State> {
  const folded = foldCase(input);
  const found =
    states.find((s) => foldCase(s.abbreviation) === folded) ?? states.find((s) => foldCase(s.name) === folded);
  if (found) return { found };
  const suggestion =
    suggest(
      input,
      states.map((s) => s.name),
    ) ??
    suggest(
      input,
      states.map((s) => s.abbreviation),
    );
  return suggestion === undefined ? {} : { suggestion };
}
