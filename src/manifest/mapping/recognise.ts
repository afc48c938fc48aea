/**
 * Which shop export a header is: each preset's signature (the columns it needs, the columns it
 * can use) against the header's names. Pure: the header comes from read-header.ts, the verdict
 * goes to load-manifest.ts, which reads the input through the one preset that matches, or says
 * why it will not guess (docs/mappings.md#recognised-exports).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ATTR_PREFIX, SIZE_PREFIX, TEMPLATE_BY_NAME } from '../csv/template.js';
import { compileExpression } from './expressions.js';
import { parseMapping } from './load-mapping.js';
import type { Mapping } from './model.js';
import { aPlatform, platformName } from '../../core/platform-names.js';
import { PRESETS_DIR } from './presets-dir.js';

/** What a preset reads: columns it cannot do without, and columns it uses when they are there. */
export interface PresetColumns {
  required: string[];
  optional: string[];
}

/** A preset's signature, with what sets it apart from the other presets. */
export interface PresetSignature extends PresetColumns {
  preset: string;
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

/**
 * The presets' columns as their definitions name them: every column a field, skip rule or
 * fill-down reads. A preset read on this branch needs every one of them.
 */
export function presetColumns(mapping: Mapping): PresetColumns {
  const tables = mapping.lookupTables ?? {};
  const used = new Set<string>();
  for (const source of [...Object.values(mapping.fields ?? {}), ...(mapping.skip ?? []).map((r) => r.when)]) {
    for (const c of compileExpression(source, tables).columns) used.add(c);
  }
  for (const c of mapping.fillDown?.columns ?? []) used.add(c);
  if (mapping.fillDown?.key !== undefined) used.add(mapping.fillDown.key);
  for (const c of Object.keys(mapping.columns ?? {})) used.add(c);
  return { required: [...used], optional: [] };
}

let signatures: PresetSignature[] | undefined;

/** Every shipped preset's signature, read once per process. */
export function presetSignatures(): PresetSignature[] {
  if (signatures !== undefined) return signatures;
  const names = readdirSync(PRESETS_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
  const columns = names.map((preset) => {
    const file = join(PRESETS_DIR, `${preset}.yaml`);
    return { preset, ...presetColumns(parseMapping(readFileSync(file, 'utf8'), file)) };
  });
  signatures = signaturesOf(columns);
  return signatures;
}

/** Signatures from each preset's columns: a column is distinctive when one preset alone reads it. */
export function signaturesOf(presets: ReadonlyArray<PresetColumns & { preset: string }>): PresetSignature[] {
  const readers = new Map<string, number>();
  for (const p of presets)
    for (const c of new Set([...p.required, ...p.optional])) readers.set(c, (readers.get(c) ?? 0) + 1);
  return presets.map((p) => ({
    ...p,
    distinctive: [...new Set([...p.required, ...p.optional])].filter((c) => readers.get(c) === 1 && !isTemplateName(c)),
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
    const missing = p.required.filter((c) => !names.has(c));
    const matchedColumns = [...p.required, ...p.optional].filter((c) => names.has(c));
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
    return {
      kind: 'ambiguous',
      candidates: near.filter((n) => n.distinctive === near[0].distinctive).map((n) => n.preset),
    };
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
  const used = new Set(presetColumns(mapping).required);
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
