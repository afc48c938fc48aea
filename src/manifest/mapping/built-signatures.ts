/**
 * The presets' signatures computed ahead by `npm run build` (build/preset-signatures.mjs), beside
 * this module, stamped with the hash of every preset file they were computed from. Recognising an
 * export needs every preset's signature, and computing them parses and validates every preset
 * with its expressions: that is what recognition costs over `--mapping` in `npm run
 * bench:recognise`, and it grows with each preset. When the file is missing (sources run directly,
 * as the tests do) or stamped for other preset files, the signatures are computed: the ones in use
 * are always those of the presets on disk.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { PresetSignature } from './recognise.js';

export const BUILT_SIGNATURES_FILE = 'preset-signatures.json';

/** The presets' texts, by name, as one hash: any change of a preset changes it. */
export function presetsStamp(texts: ReadonlyMap<string, string>): string {
  const hash = createHash('sha256');
  for (const [name, text] of [...texts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    hash.update(`${name}\u0000${text}\u0000`);
  return hash.digest('hex');
}

/** The signatures built for exactly these preset texts; undefined when there are none. */
export function builtSignatures(texts: ReadonlyMap<string, string>, file?: URL): PresetSignature[] | undefined {
  let built: { stamp?: unknown; signatures?: unknown };
  try {
    built = JSON.parse(readFileSync(file ?? new URL(`./${BUILT_SIGNATURES_FILE}`, import.meta.url), 'utf8'));
  } catch {
    return undefined;
  }
  if (built.stamp !== presetsStamp(texts) || !Array.isArray(built.signatures)) return undefined;
  return built.signatures as PresetSignature[];
}
