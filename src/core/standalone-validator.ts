import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { lateRequire } from './late-require.js';

/**
 * Validators `npm run build` generates ahead of time (build/standalone-validators.mjs: ajv's
 * standalone code written into dist/ beside the module that uses it, stamped with the hash of
 * its schema), so a process starts without loading ajv and compiling the schema. Where the file
 * is missing (sources run directly, as the tests do) or stamped for another schema, the module
 * compiles the schema itself: the validator in use is always its schema's.
 */

/** The stamp the build writes: the schema's hash, of its parsed form (whitespace does not count). */
export function schemaStamp(schema: unknown): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

interface Standalone {
  validate: ValidateFunction;
  stamp: string;
}

/**
 * The generated validator at `file` when it was made from `schema`; undefined when there is
 * none or it is stale. A file that fails to load otherwise is an error, not a silent fallback.
 */
export function prebuiltValidator<T>(file: URL, schema: unknown): ValidateFunction<T> | undefined {
  let mod: Standalone;
  try {
    mod = lateRequire<Standalone>(fileURLToPath(file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw err;
  }
  return mod.stamp === schemaStamp(schema) ? (mod.validate as ValidateFunction<T>) : undefined;
}
