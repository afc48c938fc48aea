import { foldCase } from '../core/suggest.js';

/**
 * The outcome of matching a human value against an account's lookup list: the entry it
 * names, or nothing (with the closest entry's spelling to suggest, when one is close).
 */
export type Match<T> = { found: T } | { found?: undefined; suggestion?: string };

type Tables = Map<(entry: never) => string, Map<string, unknown>>;
const tables = new WeakMap<readonly object[], Tables>();

/**
 * The first entry of `list` whose `field`, folded (foldCase), is `folded`: what
 * `list.find((e) => foldCase(field(e)) === folded)` answers, from a table made once per list
 * and field (`field` must be one function, not a new closure per call). Every job of a run is
 * resolved against the same lookup lists (one array each, kept by the catalogue), so each
 * list is folded once per run, not once per job.
 */
export function findFolded<T extends object>(
  list: readonly T[],
  field: (entry: T) => string,
  folded: string,
): T | undefined {
  let byField = tables.get(list);
  if (byField === undefined) {
    byField = new Map();
    tables.set(list, byField);
  }
  let table = byField.get(field as (entry: never) => string) as Map<string, T> | undefined;
  if (table === undefined) {
    table = new Map();
    // The first entry wins, as find() would have it.
    for (const entry of list) {
      const key = foldCase(field(entry));
      if (!table.has(key)) table.set(key, entry);
    }
    byField.set(field as (entry: never) => string, table);
  }
  return table.get(folded);
}
