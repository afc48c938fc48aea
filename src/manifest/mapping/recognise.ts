/**
 * Which shop export a header is: each preset's signature (the columns it needs, the columns it
 * can use) against the header's names. Pure: the header comes from read-header.ts, the verdict
 * goes to load-manifest.ts, which reads the input through the one preset that matches, or says
 * why it will not guess (docs/mappings.md#recognised-exports).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTemplateName, templateNames } from '../csv/template.js';
import { parseMapping } from './load-mapping.js';
import type { Mapping } from './model.js';
import { type ColumnSet, presetColumns, selectVariant } from './preset-columns.js';
import { aPlatform, platformName } from '../../core/platform-names.js';
import { suggest } from '../../core/suggest.js';
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

/**
 * Required columns a form must have, all in the header, for a header with fewer distinctive
 * columns to be its export: a shop export trimmed to the columns the preset needs (Shopify's
 * required ten share all but two with Squarespace's) is still that export.
 */
const ENOUGH_REQUIRED = 5;

/** The share of a form's required columns a header must have to be said to nearly fit it. */
const NEAR_SHARE = 0.6;

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

/** How one preset's signature fits a header. */
interface Fit {
  preset: string;
  /** Enough of its distinctive columns to be taken for its export. */
  looksLike: boolean;
  distinctive: number;
  /** Its form nearest to the header: the required columns the header lacks, and the share it has. */
  missing: string[];
  share: number;
  /** Every required column of a form with at least ENOUGH_REQUIRED of them. */
  completeWide: boolean;
  matchedColumns: string[];
}

function fitOf(p: PresetSignature, names: ReadonlySet<string>): Fit {
  const enough = Math.min(ENOUGH_DISTINCTIVE, p.distinctive.length);
  const distinctive = p.distinctive.filter((c) => names.has(c)).length;
  // The form the header comes nearest to: the fewest required columns missing.
  const forms = p.forms
    .map((f) => ({ f, missing: f.required.filter((c) => !names.has(c)) }))
    .sort((a, b) => a.missing.length - b.missing.length);
  const best = forms[0];
  const missing = best?.missing ?? [];
  const required = best?.f.required.length ?? 0;
  return {
    preset: p.preset,
    looksLike: enough > 0 && distinctive >= enough,
    distinctive,
    missing,
    share: required === 0 ? 0 : (required - missing.length) / required,
    completeWide: forms.some((x) => x.missing.length === 0 && x.f.required.length >= ENOUGH_REQUIRED),
    matchedColumns: p.columns.filter((c) => names.has(c)),
  };
}

/**
 * The header against every signature. A match needs every required column of a form and
 * enough distinctive ones, or every required column of a wide form (an export trimmed to what
 * the preset needs); two matches are ambiguous; a header with enough distinctive columns of one
 * preset, or most of one form's required columns, but not everything it needs is near. Never a
 * guess between presets.
 */
export function recogniseHeader(header: readonly string[], presets: readonly PresetSignature[]): Recognition {
  const names = new Set(header.map((h) => h.trim()).filter((h) => h !== ''));
  const fits = presets.map((p) => fitOf(p, names));
  const complete = fits.filter((f) => f.missing.length === 0);
  const strong = complete.filter((f) => f.looksLike);
  const matches = strong.length > 0 ? strong : complete.filter((f) => f.completeWide);
  if (matches.length === 1) {
    const [m] = matches;
    return { kind: 'match', preset: m.preset, matchedColumns: m.matchedColumns };
  }
  if (matches.length > 1) return { kind: 'ambiguous', candidates: matches.map((m) => m.preset) };
  const near = fits
    .filter((f) => f.looksLike || (f.share >= NEAR_SHARE && f.matchedColumns.length >= ENOUGH_REQUIRED - 1))
    .sort((a, b) => b.distinctive - a.distinctive || b.share - a.share);
  if (near.length > 1 && near[0].distinctive === near[1].distinctive && near[0].share === near[1].share) {
    const best = near.filter((n) => n.distinctive === near[0].distinctive && n.share === near[0].share);
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

const folded = (name: string): string => name.trim().replace(/\s+/g, ' ').toLowerCase();

/**
 * The columns a header lacks, listed; one it has in another case or spacing (`Lineitem SKU` for
 * `Lineitem sku`, a hand edit or another tool's export) says so, since names must match exactly
 * and "lacks" alone reads as wrong to whoever sees the column in the file.
 */
function lacking(missing: readonly string[], header: readonly string[]): string {
  const inHeader = new Map<string, string>();
  for (const h of header) if (h.trim() !== '' && !inHeader.has(folded(h))) inHeader.set(folded(h), h.trim());
  const near = missing.map((c) => inHeader.get(folded(c))).filter((h): h is string => h !== undefined);
  if (near.length === 0) return listed(missing);
  return `${listed(missing)} (it has ${listed(near)}: column names must match exactly, case included)`;
}

/** The one message for a header htorder will not read on its own: what it looks like, and the flag to choose. */
export function recognitionMessage(
  r: Exclude<Recognition, { kind: 'none' | 'match' }>,
  header: readonly string[] = [],
): string {
  if (r.kind === 'ambiguous') {
    const which = r.candidates.map((c) => `${platformName(c)} (--mapping ${c})`).join(', ');
    return `the header fits more than one known export: ${which}; choose one with --mapping`;
  }
  return (
    `this looks like ${aPlatform(r.preset)} export, but its header lacks ${lacking(r.missing, header)}, ` +
    `which the ${r.preset} preset reads; export with those columns (docs/presets/${r.preset}.md), or use ` +
    `--mapping ${r.preset} with a mapping that extends it (docs/mappings.md)${optionHint(r.preset, header)}`
  );
}

/** Odoo's relational fields in an export's header: `Order Lines/Product`, `partner_shipping_id/street`. */
const SUB_FIELD = /^[^/]+\/[^/]+/;

/** Technical field names (Odoo's import-compatible export): `name`, `order_line/product_uom_qty`. */
const TECHNICAL = /^[a-z][a-z0-9_]*(?:\/[a-z][a-z0-9_]*)*$/;

/** Whether most named cells of a header are technical field names. */
function technical(header: readonly string[]): boolean {
  const named = header.map((h) => h.trim()).filter((h) => h !== '');
  return named.length > 0 && named.filter((h) => TECHNICAL.test(h)).length * 2 > named.length;
}

/**
 * The export option that changes an Odoo header, where changing it helps: the import-compatible
 * export leaves out read-only fields and offers no sub-field of the delivery address, which the
 * labelled export has.
 */
function optionHint(preset: string, header: readonly string[]): string {
  if (preset !== 'odoo' || !technical(header)) return '';
  return (
    "; Odoo's import-compatible export leaves some of them out (read-only fields, the delivery address's " +
    'street, city and ZIP): untick "I want to update data (import-compatible export)" in Odoo\'s export dialog'
  );
}

/**
 * For a header no preset fits (kind none) and no other export of a platform's (other-exports.ts):
 * the one message saying what the file is, when that is clear: Odoo's export with labels in another
 * language, or a header with nothing of the order template; else undefined (read as the template,
 * whose errors name each column).
 */
export function unknownHeaderMessage(header: readonly string[]): string | undefined {
  const named = header.map((h) => h.trim()).filter((h) => h !== '');
  // One cell holding the whole line is another delimiter's file: the read says so.
  if (named.length < 3 || named.some((h) => /[;\t|]/.test(h))) return undefined;
  const prefixes = new Map<string, number>();
  for (const h of named.filter((x) => SUB_FIELD.test(x))) {
    const prefix = h.slice(0, h.indexOf('/'));
    prefixes.set(prefix, (prefixes.get(prefix) ?? 0) + 1);
  }
  if ([...prefixes.values()].some((n) => n >= 2) && prefixes.size >= 2) {
    return (
      "this looks like an Odoo export whose labels are in another language: the odoo preset reads Odoo's " +
      'English labels and its technical names; export with English as your Odoo language, or tick ' +
      '"I want to update data (import-compatible export)" in the export dialog for technical names (docs/presets/odoo.md)'
    );
  }
  const templates = templateNames();
  if (named.some((h) => isTemplateName(h) || suggest(h, templates) !== undefined)) return undefined;
  return (
    "the header has none of the order template's columns (orderNumber, code, quantity, …) and fits no shop export " +
    `htorder reads (${[...new Set(presetSignatures().map((p) => platformName(p.preset)))].join(', ')}): ` +
    'if it is an order export, describe it in a mapping (--mapping, docs/mappings.md)'
  );
}

/**
 * The one message for an export read through a preset (given, or extended by the mapping) whose
 * header lacks columns the preset needs: which, and what to do; undefined when none is missing.
 */
export function presetMisfitMessage(mapping: Mapping, header: readonly string[]): string | undefined {
  const preset = mapping.preset as string;
  const names = new Set(header.map((h) => h.trim()));
  const chosen = selectVariant(mapping, header).mapping;
  const missing = presetColumns(chosen).required.filter((c) => !names.has(c));
  if (missing.length === 0) return undefined;
  const separator = header.map((h) => /[;\t|]/.exec(h)?.[0]).find((c) => c !== undefined);
  if (separator !== undefined && header.length <= 2) {
    const shown = separator === '\t' ? 'tabs' : `"${separator}"`;
    return (
      `the header reads as one column: the file looks separated by ${shown}, not commas; ` +
      `give the delimiter in a mapping that extends ${preset} (docs/mappings.md)`
    );
  }
  return (
    `the header lacks ${lacking(missing, header)}, which the ${preset} preset reads; export with those columns ` +
    `(docs/presets/${preset}.md), or read them otherwise in a mapping that extends ${preset} (docs/mappings.md)` +
    optionHint(preset, header)
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
