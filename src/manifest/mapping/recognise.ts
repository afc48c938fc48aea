/**
 * Which shop export a header is: each preset's signature (the columns it needs, the columns it
 * can use) against the header's names. Pure: the header comes from read-header.ts, the verdict
 * goes to load-manifest.ts, which reads the input through the one preset that matches, or says
 * why it will not guess (docs/mappings.md#recognised-exports).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ATTR_PREFIX, SIZE_PREFIX, TEMPLATE_BY_NAME } from '../csv/template.js';
import { parseMapping } from './load-mapping.js';
import type { Mapping } from './model.js';
import { type ColumnSet, presetColumns } from './preset-columns.js';
import { aPlatform, platformName } from '../../core/platform-names.js';
import { PRESETS_DIR } from './presets-dir.js';
import { builtSignatures } from './built-signatures.js';

/** A preset's signature: the forms of its export (the base and each variant), and what sets it apart. */
export interface PresetSignature {
  preset: string;
  /** Each form's required and optional columns (presetColumns): a header fits a form that it has every required column of. */
  forms: ColumnSet[];
  /** Every column of every form. */
  columns: string[];
  /** Its columns no other preset reads and no default-template column is called. */
  distinctive: string[];
}

/** Distinctive columns a header must have before it is taken for (or said to look like) a preset's export. */
const ENOUGH_DISTINCTIVE = 3;

/** The verdict on a header. */
export type Recognition =
  /** Nothing to go on: read as the default template (its own errors, if any, say the rest). */
  | { kind: 'none' }
  /** Exactly one preset's signature: read through it. */
  | { kind: 'match'; preset: string; matchedColumns: string[] }
  /** More than one preset's signature: the user chooses. */
  | { kind: 'ambiguous'; candidates: string[] }
  /** Enough of one preset's columns to be its export, not all it needs. */
  | { kind: 'near'; preset: string; missing: string[]; matchedColumns: string[] };

/** The forms of a mapping's export: the base and each variant (presetColumns). */
export function formsOf(mapping: Mapping): ColumnSet[] {
  const { variants, ...base } = presetColumns(mapping);
  return [base, ...variants];
}

let signatures: PresetSignature[] | undefined;

/** Every shipped preset's signature, read once per process: built ahead (built-signatures.ts), else computed. */
export function presetSignatures(): PresetSignature[] {
  if (signatures !== undefined) return signatures;
  const texts = presetTexts();
  signatures = builtSignatures(texts) ?? computedSignatures(texts);
  return signatures;
}

/** The shipped presets' texts, by name (presets/NAME.yaml). */
export function presetTexts(): Map<string, string> {
  const names = readdirSync(PRESETS_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
  return new Map(names.map((name) => [name, readFileSync(join(PRESETS_DIR, `${name}.yaml`), 'utf8')]));
}

/** The presets' signatures from their texts: each parsed, validated and its columns listed. */
export function computedSignatures(texts: ReadonlyMap<string, string>): PresetSignature[] {
  const columns = [...texts].map(([preset, text]) => {
    const file = join(PRESETS_DIR, `${preset}.yaml`);
    return { preset, forms: formsOf(parseMapping(text, file)) };
  });
  return signaturesOf(columns);
}

/** Signatures from each preset's forms: a column is distinctive when one preset alone reads it. */
export function signaturesOf(presets: ReadonlyArray<{ preset: string; forms: ColumnSet[] }>): PresetSignature[] {
  const all = presets.map((p) => ({
    ...p,
    columns: [...new Set(p.forms.flatMap((f) => [...f.required, ...f.optional]))],
  }));
  const readers = new Map<string, number>();
  for (const p of all) for (const c of p.columns) readers.set(c, (readers.get(c) ?? 0) + 1);
  return all.map((p) => ({
    ...p,
    distinctive: p.columns.filter((c) => readers.get(c) === 1 && !isTemplateName(c)),
  }));
}

export function isTemplateName(name: string): boolean {
  return TEMPLATE_BY_NAME.has(name) || name.startsWith(ATTR_PREFIX) || name.startsWith(SIZE_PREFIX);
}

/** A header every name of which is the default template's: no preset is considered. */
export function isTemplateHeader(header: readonly string[]): boolean {
  return header.every((h) => h.trim() === '' || isTemplateName(h.trim()));
}

/**
 * The header against every signature. A match needs every required column and enough
 * distinctive ones; two matches are ambiguous; a header with enough distinctive columns of one
 * preset but not everything it needs is near. Never a guess between presets.
 */
export function recogniseHeader(header: readonly string[], presets: readonly PresetSignature[]): Recognition {
  const names = new Set(header.map((h) => h.trim()).filter((h) => h !== ''));
  const scored = presets.map((p) => {
    const enough = Math.min(ENOUGH_DISTINCTIVE, p.distinctive.length);
    const distinctive = p.distinctive.filter((c) => names.has(c)).length;
    // The form the header comes nearest to: the fewest required columns missing.
    const missing =
      p.forms.map((f) => f.required.filter((c) => !names.has(c))).sort((a, b) => a.length - b.length)[0] ?? [];
    const matchedColumns = p.columns.filter((c) => names.has(c));
    return { preset: p.preset, looksLike: enough > 0 && distinctive >= enough, missing, matchedColumns, distinctive };
  });
  const matches = scored.filter((s) => s.looksLike && s.missing.length === 0);
  if (matches.length === 1) {
    const [m] = matches;
    return { kind: 'match', preset: m.preset, matchedColumns: m.matchedColumns };
  }
  if (matches.length > 1) return { kind: 'ambiguous', candidates: matches.map((m) => m.preset) };
  const near = scored.filter((s) => s.looksLike).sort((a, b) => b.distinctive - a.distinctive);
  if (near.length > 1 && near[0].distinctive === near[1].distinctive) {
    const best = near.filter((n) => n.distinctive === near[0].distinctive);
    return { kind: 'ambiguous', candidates: best.map((n) => n.preset) };
  }
  if (near.length > 0) {
    const [n] = near;
    return { kind: 'near', preset: n.preset, missing: n.missing, matchedColumns: n.matchedColumns };
  }
  return { kind: 'none' };
}

/** Up to `n` names, quoted, then how many more. */
function listed(names: readonly string[], n = 5): string {
  const shown = names.slice(0, n).map((c) => `"${c}"`);
  return names.length > n ? `${shown.join(', ')} and ${names.length - n} more` : shown.join(', ');
}

/** The one message for a header htorder will not read on its own: what it looks like, and the flag to choose. */
export function recognitionMessage(r: Exclude<Recognition, { kind: 'none' | 'match' }>): string {
  if (r.kind === 'ambiguous') {
    const which = r.candidates.map((c) => `${platformName(c)} (--mapping ${c})`).join(', ');
    return `the header fits more than one known export: ${which}; choose one with --mapping`;
  }
  return (
    `this looks like ${aPlatform(r.preset)} export, but its header lacks ${listed(r.missing)}, ` +
    `which the ${r.preset} preset reads; use --mapping ${r.preset} with a mapping that extends it ` +
    '(docs/mappings.md), or export with those columns'
  );
}

/** The preset whose distinctive columns a mapping reads most of (a preset itself, or a mapping extending one). */
export function presetOfMapping(mapping: Mapping, presets: readonly PresetSignature[]): string | undefined {
  const used = new Set(formsOf(mapping).flatMap((f) => [...f.required, ...f.optional]));
  let best: { preset: string; n: number } | undefined;
  for (const p of presets) {
    const n = p.distinctive.filter((c) => used.has(c)).length;
    if (n > 0 && (best === undefined || n > best.n)) best = { preset: p.preset, n };
  }
  return best?.preset;
}

/**
 * The one message for an input read through a mapping made for another export (`used`: the
 * preset the mapping reads, if any), when its header is a preset's export; else undefined.
 */
export function wrongMappingMessage(r: Recognition, used: string | undefined, mappingName: string): string | undefined {
  if ((r.kind !== 'match' && r.kind !== 'near') || r.preset === used) return undefined;
  return (
    `this looks like ${aPlatform(r.preset)} export, which the mapping ${mappingName} does not read; ` +
    `use --mapping ${r.preset}`
  );
}
