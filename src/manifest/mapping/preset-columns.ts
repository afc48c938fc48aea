/**
 * What a mapping (a shipped preset or a user's) reads from an export's header: the columns it
 * requires, the ones it uses when present, and the variant of the export a header is. Used by
 * the mapped rows (which variant to read a file with) and by whoever recognises an export by its
 * header (a preset's signature is its required columns).
 */
import { analyseExpression } from './expressions.js';
import type { Mapping, MappingVariant } from './model.js';

/** The columns one form of an export must have (`required`) and may have (`optional`). */
export interface ColumnSet {
  required: string[];
  optional: string[];
}

/**
 * A preset's columns: the base form's, and each variant's (its `when` columns among the
 * required). A header is this preset's export when it has every required column of the base or
 * of one variant; `optional` columns count towards a match but are never needed.
 */
export interface PresetColumns extends ColumnSet {
  variants: Array<ColumnSet & { name: string }>;
}

export function presetColumns(preset: Mapping): PresetColumns {
  return {
    ...columnSet(preset),
    variants: (preset.variants ?? []).map((v) => {
      const set = columnSet(applyVariant(preset, v));
      return { name: v.name, ...set, required: [...new Set([...v.when, ...set.required])] };
    }),
  };
}

/** Every column the mapping names, split by whether it is optional. */
function columnSet(m: Mapping): ColumnSet {
  const named = new Set<string>();
  const add = (source: string) => {
    for (const c of analyseExpression(source).columns) named.add(c);
  };
  for (const section of [m.columns, m.sizeColumns, m.attributeColumns])
    for (const c of Object.keys(section ?? {})) named.add(c);
  for (const source of Object.values(m.fields ?? {})) add(source);
  for (const rule of m.skip ?? []) add(rule.when);
  if (m.lines !== undefined) add(m.lines);
  if (m.fillDown?.key !== undefined) named.add(m.fillDown.key);
  for (const c of m.fillDown?.columns ?? []) named.add(c);
  const optional = new Set([...(m.optionalColumns ?? []), ...(m.ignoreColumns ?? [])]);
  return {
    required: [...named].filter((c) => !optional.has(c)),
    optional: [...optional],
  };
}

/**
 * The form of the export this header is: the first variant whose `when` columns are all in it,
 * applied; else the mapping as written.
 */
export function selectVariant(mapping: Mapping, header: readonly string[]): { mapping: Mapping; variant?: string } {
  const names = new Set(header.map((h) => h.trim()));
  const i = (mapping.variants ?? []).findIndex((x) => x.when.every((c) => names.has(c)));
  if (i < 0) return { mapping };
  const v = (mapping.variants ?? [])[i];
  const out = applyVariant(mapping, v);
  // Messages point at the variant's own expressions where it wrote them.
  const prefix = `variants[${i}].`;
  const locations = { ...mapping.expressionLocations };
  for (const [key, at] of Object.entries(mapping.expressionLocations ?? {})) {
    if (!key.startsWith(prefix)) continue;
    locations[key.slice(prefix.length)] = at;
  }
  return { mapping: { ...out, expressionLocations: locations }, variant: v.name };
}

/**
 * A variant over its mapping: fields merged (the variant's win), its skip rules, fillDown and
 * lines in place of the mapping's, its optional columns added.
 */
function applyVariant(m: Mapping, v: MappingVariant): Mapping {
  const out: Mapping = { ...m, fields: { ...m.fields, ...v.fields } };
  delete out.variants;
  if (v.skip !== undefined) out.skip = v.skip;
  if (v.fillDown !== undefined) out.fillDown = v.fillDown;
  if (v.lines !== undefined) out.lines = v.lines;
  if (v.optionalColumns !== undefined)
    out.optionalColumns = [...new Set([...(m.optionalColumns ?? []), ...v.optionalColumns])];
  return out;
}
