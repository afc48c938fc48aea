import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { manifestSchema } from './manifest-schema.js';

/**
 * The compiled validator of schemas/manifest.schema.json. `npm run build` generates it ahead of
 * time (build/standalone-validators.mjs: ajv's standalone code beside this module, stamped with
 * the hash of its schema), so a command starts without loading ajv and compiling the schema
 * (a run's start-up in `npm run bench`). When that file is missing (sources run directly, as the
 * tests do) or stamped for another schema, the schema is compiled here: the validator in use is
 * always the schema's.
 */

/** ajv's options for the manifest schema: the build and the fallback compile with the same ones. */
export const MANIFEST_AJV_OPTIONS = {
  allErrors: true,
  verbose: true,
  strict: true,
  // strictRequired off: the per-itemType `then` branches require fields their parent declares.
  strictRequired: false,
  allowUnionTypes: true,
  // String lengths in UTF-16 units, not code points: the schema's only length limits are
  // `minLength: 1`, where the two agree (a string is empty in both or in neither), and
  // counting code points walked every checked string of every item (a million-row CSV has
  // millions). A test keeps every length limit at 1 (test/manifest/schema). ajv 8 calls the
  // option deprecated but honours it; its notice saying so is the one warning dropped below.
  unicode: false,
  logger: {
    log: (...args: unknown[]) => console.log(...args),
    warn: (...args: unknown[]) => {
      if (!String(args[0]).startsWith('DEPRECATED: option unicode.')) console.warn(...args);
    },
    error: (...args: unknown[]) => console.error(...args),
  },
} as const;

/** The stamp the build writes: the schema's hash, of its parsed form (whitespace does not count). */
export function schemaStamp(schema: unknown): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

export const STANDALONE_FILE = 'manifest-validator.standalone.cjs';

interface Standalone {
  validate: ValidateFunction;
  stamp: string;
}

/**
 * The generated validator at `file` when it was made from the schema on disk; undefined when
 * there is none or it is stale (made from another schema). A file that fails to load otherwise
 * is an error, not a silent fallback.
 */
export function prebuilt(file: URL): ValidateFunction | undefined {
  let mod: Standalone;
  try {
    mod = createRequire(import.meta.url)(fileURLToPath(file)) as Standalone;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw err;
  }
  return mod.stamp === schemaStamp(manifestSchema) ? mod.validate : undefined;
}

async function compiled(): Promise<ValidateFunction> {
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  return new Ajv2020(MANIFEST_AJV_OPTIONS).compile(manifestSchema);
}

export const validateManifest: ValidateFunction =
  prebuilt(new URL(`./${STANDALONE_FILE}`, import.meta.url)) ?? (await compiled());
