import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The presets shipped with htorder (`--mapping shopify`): presets/NAME.yaml at the package root.
 * A module of its own so that naming a preset's path (watch routes) does not load the mapping
 * code (the yaml package, jsonata, csv-parse), which watch loads only when a mapping is used.
 */
export const PRESETS_DIR = fileURLToPath(new URL('../../../presets/', import.meta.url));

/** The shipped preset called `name` (presets/NAME.yaml), when `name` is a preset's kind of name and there is one. */
export function presetPath(name: string): string | undefined {
  if (!/^[a-z][a-z0-9-]*$/.test(name)) return undefined;
  const file = join(PRESETS_DIR, `${name}.yaml`);
  return existsSync(file) ? file : undefined;
}
