/**
 * Compact objects for big files. An object built as `{}` plus assignments reserves four
 * inline property slots and puts any further ones in a separate backing array; an object
 * literal gets exactly its keys inline. Objects of one CSV file come in a handful of key sets
 * (which cells a row fills), so one literal-building function is made per key set and reused
 * for every object with that set: a few functions, and every item and job smaller, which peak
 * RSS in `npm run bench:check` shows.
 */
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
