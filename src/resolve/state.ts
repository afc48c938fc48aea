import type { State } from '../api/types.js';
import { foldCase, suggest } from '../core/suggest.js';
import { findFolded, type Match } from './match.js';

const stateAbbreviation = (s: State): string => s.abbreviation;
const stateName = (s: State): string => s.name;

/** A state as written (name or abbreviation, any case, accents optional) → the lookup's entry. */
export function matchState(input: string, states: readonly State[]): Match<State> {
  const folded = foldCase(input);
  const found = findFolded(states, stateAbbreviation, folded) ?? findFolded(states, stateName, folded);
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
