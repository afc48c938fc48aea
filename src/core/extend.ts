/**
 * `{ ...base, ...more }` for objects a run keeps per job (job states, resolutions, estimates):
 * the same keys in the same order, with hidden classes shared by every such object.
 *
 * On Node 20 (V8 11), an object literal that spreads an object and then adds keys — or an
 * object spread and then assigned to — gets a hidden class of its own: a map, a descriptor
 * array and an out-of-object property array per object, about 300 bytes each. A job holds
 * several (its state, its request body and address, each line's estimate) until the run
 * ends, which was about a third of what a job kept in memory (`npm run bench -- --memory`, heap
 * snapshots). `Object.assign` onto a fresh object walks the transition tree instead, so
 * objects of the same keys share one.
 *
 * A `__proto__` key of the objects' own (JSON can make one) is defined, as a spread defines it,
 * never set as the prototype.
 */
export function extend<T extends object, const U extends object>(base: T, more: U): Extended<T, U> {
  const copy =
    Object.hasOwn(base, '__proto__') || Object.hasOwn(more, '__proto__')
      ? { ...base, ...more }
      : Object.assign({}, base, more);
  return copy as unknown as Extended<T, U>;
}

/** `base`'s type with `more`'s keys replaced, member by member of a union (a job state's outcomes). */
type Extended<T, U> = T extends unknown ? Omit<T, keyof U> & U : never;
