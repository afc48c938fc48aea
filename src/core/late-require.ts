import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A package (or a file of one) loaded when first asked for, not when the module that names it is
 * loaded: what only some runs need (a terminal's pretty log, input that is not UTF-8, a config's
 * routes, a schema compiled at run time) then costs the others nothing at start. Node keeps it
 * loaded after the first call, so a caller may ask again each time it needs it.
 */
export function lateRequire<T>(id: string): T {
  return require(id) as T;
}
