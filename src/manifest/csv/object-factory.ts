/**
 * Compact objects for big files. An object built as `{}` plus assignments reserves four
 * inline property slots and puts any further ones in a separate backing array; an object
 * literal gets exactly its keys inline. Objects of one CSV file come in a handful of key sets
 * (which cells a row fills), so one literal-building function is made per key set and reused
 * for every object with that set: a million items, a few functions, ~30 bytes saved each.
 */
import { TEMPLATE_BY_NAME } from './template.js';

export type Build = (values: readonly unknown[]) => Record<string, unknown>;

/** A function returning `{ [keys[k]]: values[slots[k]] }` as one object literal. */
export function literalBuilder(keys: readonly string[], slots: readonly number[]): Build {
  if (keys.includes('__proto__')) {
    // A literal `{"__proto__": v}` would set the prototype; build that rare object the slow way.
    return (v) => {
      const o: Record<string, unknown> = {};
      for (const [i, k] of keys.entries()) {
        Object.defineProperty(o, k, { value: v[slots[i]], enumerable: true, writable: true, configurable: true });
      }
      return o;
    };
  }
  // JSON.stringify makes each key a valid string literal whatever it contains (keys may come
  // from file headers such as attr:NAME), so the generated source cannot be anything but data.
  const body = keys.map((k, i) => `${JSON.stringify(k)}: v[${slots[i]}]`).join(', ');
  return new Function('v', `return { ${body} };`) as Build;
}

/** Template order of keys, for rebuilding jobs and addresses in their canonical key order. */
const ORDER: ReadonlyMap<string, number> = new Map(
  [...TEMPLATE_BY_NAME.keys(), 'deliveryAddress', 'items'].map((k, i) => [k, i]),
);

/**
 * Rebuilds objects whose keys were added one by one (jobs, addresses: their fields arrive row
 * by row) as compact literals with keys in template order. One builder per distinct key set.
 */
export class Compactor {
  private readonly builders = new Map<string, { keys: string[]; build: Build }>();

  /** `templateOrder` false keeps the object's own key order (size runs: S, M, L as written). */
  compact(obj: Record<string, unknown>, templateOrder = true): Record<string, unknown> {
    const own = Object.keys(obj);
    const signature = own.join('\u0000');
    let entry = this.builders.get(signature);
    if (entry === undefined) {
      const keys = templateOrder ? [...own].sort((a, b) => (ORDER.get(a) ?? 0) - (ORDER.get(b) ?? 0)) : own;
      entry = {
        keys,
        build: literalBuilder(
          keys,
          keys.map((_, i) => i),
        ),
      };
      this.builders.set(signature, entry);
    }
    const values = new Array<unknown>(entry.keys.length);
    for (let i = 0; i < values.length; i++) values[i] = obj[entry.keys[i]];
    return entry.build(values);
  }
}
