import { fileURLToPath } from 'node:url';

/**
 * The presets shipped with htorder (`--mapping shopify`): presets/NAME.yaml at the package root.
 * A module of its own so that naming a preset's path (watch routes) does not load the mapping
 * code (the yaml package, jsonata, csv-parse), which watch loads only when a mapping is used.
 */
export const PRESETS_DIR = fileURLToPath(new URL('../../../presets/', import.meta.url));
