/**
 * `{ ...base, ...more }` for objects a run keeps per job (job states, resolutions, estimates):
 * the same keys in the same order, with hidden classes shared by every such object.
 *
 * On Node 20 (V8 11), an object literal that spreads an object and then adds keys — or an
 * object spread and then assigned to — gets a hidden class of its own: a map, a descriptor
 * array and an out-of-object property array per object, about 300 bytes each. A job holds
 * several (its state, its request body and address, each line's estimate) until the run
 * ends, which was about half of what a job kept in memory (`npm run bench -- --memory`, heap
 * snapshots). `Object.assign` onto a fresh object walks the transition tree instead, so
 * objects of the same keys share one.
 *
 * Only for keys the program itself names (never keys read from a file): `Object.assign` sets
 * a `__proto__` key where a spread defines it.
 */
export function extend<T extends object, const U extends object>(base: T, more: U): Extended<T, U> {
  return Object.assign({}, base, more) as unknown as Extended<T, U>;
}

/** `base`'s type with `more`'s keys replaced, member by member of a union (a job state's outcomes). */
type Extended<T, U> = T extends unknown ? Omit<T, keyof U> & U : never;
