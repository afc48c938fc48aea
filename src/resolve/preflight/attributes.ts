import type { ProcessAttribute } from '../../api/types.js';
import type { Diagnostic, SourceMap } from '../../manifest/model.js';
import { isNumberText } from '../../core/number-text.js';
import { didYouMean, foldCase, quote } from '../../core/suggest.js';
import { childPath } from '../../manifest/field-path.js';
import { diagnostic } from './diagnostic.js';

/** The custom-size metadata attributes: width and height, passed to pricing as dgX/dgY. */
export const DG_X = 'DG-X';
export const DG_Y = 'DG-Y';

/**
 * A PriceCode line's `attributes` against the price code's definitions: required ones
 * present, names spelled the account's way (`Colors` for US, `Colours` for NZ/UK), select
 * values allowed, text within its lengths (never truncated: the user decides what to cut),
 * numbers within range. `base` is the item's path, e.g. `jobs[3].items[0]`.
 */
export function checkAttributes(
  values: Readonly<Record<string, string>> | undefined,
  defs: readonly ProcessAttribute[] | null,
  priceCode: string,
  base: string,
  sources: SourceMap,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const given = values ?? {};
  const named = (defs ?? []).filter((d): d is NamedAttribute => typeof d.name === 'string');
  const attrsPath = `${base}.attributes`;
  const code = quote(priceCode);

  for (const [key, raw] of Object.entries(given)) {
    const field = childPath(attrsPath, key);
    const def = named.find((d) => d.name === key);
    if (!def) {
      const names = named.map((d) => d.name);
      out.push(
        diagnostic(
          sources,
          'error',
          'attribute.unknown',
          field,
          `${code} has no attribute ${quote(key)}${didYouMean(key, names)}` +
            (names.length ? `; its attributes are: ${names.join(', ')}` : '; it takes no attributes'),
        ),
      );
      continue;
    }
    const value = String(raw);
    if (value === '') continue; // an empty value is "not given": the required check below owns it
    out.push(...checkValue(def, value, field, code, sources));
  }

  for (const def of named) {
    if (!def.required || def.isMetaDataAttribute) continue; // dimensions: see checkDimensions
    const v = given[def.name];
    if (v !== undefined && String(v) !== '') continue;
    const allowed = selectValues(def);
    out.push(
      diagnostic(
        sources,
        'error',
        'attribute.required',
        childPath(attrsPath, def.name),
        `${code} requires the attribute ${quote(def.name)}` +
          (allowed.length ? ` (one of: ${allowed.join(', ')})` : ''),
      ),
    );
  }
  return out;
}

/** A metadata (custom size) price code needs both DG-X and DG-Y to be priced at all. */
export function checkDimensions(
  values: Readonly<Record<string, string>> | undefined,
  priceCode: string,
  base: string,
  sources: SourceMap,
): Diagnostic[] {
  const missing = [DG_X, DG_Y].filter((k) => values?.[k] === undefined || String(values[k]) === '');
  if (missing.length === 0) return [];
  return [
    diagnostic(
      sources,
      'error',
      'attribute.dimensions-missing',
      childPath(`${base}.attributes`, missing[0]),
      `${quote(priceCode)} is a custom size: give its width and height as attributes ${DG_X} and ${DG_Y} ` +
        `(missing: ${missing.join(', ')})`,
    ),
  ];
}

function selectValues(def: ProcessAttribute): string[] {
  return (def.enumerableValues ?? []).map((e) => e.value);
}

type NamedAttribute = ProcessAttribute & { name: string };
/** A value's problem: its diagnostic code and message. */
type ValueProblem = { code: string; message: string } | undefined;

function checkValue(def: NamedAttribute, value: string, field: string, code: string, sources: SourceMap): Diagnostic[] {
  const problem = valueProblem(def, value, code);
  return problem ? [diagnostic(sources, 'error', problem.code, field, problem.message)] : [];
}

function valueProblem(def: NamedAttribute, value: string, code: string): ValueProblem {
  switch (def.type) {
    case 'select':
      return selectProblem(def, value, code);
    case 'text':
      return textProblem(def, value, code);
    case 'int':
    case 'decimal':
      return numberProblem(def, value, code);
    default:
      return undefined; // a type the spec does not list: let the API judge it
  }
}

function selectProblem(def: NamedAttribute, value: string, code: string): ValueProblem {
  const entries = def.enumerableValues ?? [];
  if (entries.length === 0 || entries.some((e) => e.value === value)) return undefined;
  // "Four" for value "4": point at the value whose display text the user wrote.
  const byText = entries.find((e) => foldCase(e.text) === foldCase(value) || foldCase(e.value) === foldCase(value));
  const hint = byText ? ` (did you mean ${quote(byText.value)}?)` : '';
  const allowed = entries.map((e) => e.value).join(', ');
  return {
    code: 'attribute.not-allowed',
    message: `${quote(value)} is not an allowed value of ${quote(def.name)} for ${code}${hint}; allowed: ${allowed}`,
  };
}

function textProblem(def: NamedAttribute, value: string, code: string): ValueProblem {
  const length = [...value].length;
  const name = quote(def.name);
  if (def.maxLength !== undefined && def.maxLength !== null && length > def.maxLength) {
    return {
      code: 'attribute.too-long',
      message: `${name} is ${chars(length)}, longer than its maximum ${def.maxLength} for ${code} (htorder never truncates: shorten it)`,
    };
  }
  if (def.minLength !== undefined && def.minLength !== null && length < def.minLength) {
    return {
      code: 'attribute.too-short',
      message: `${name} is ${chars(length)}, shorter than its minimum ${def.minLength} for ${code}`,
    };
  }
  return undefined;
}

function numberProblem(def: NamedAttribute, value: string, code: string): ValueProblem {
  const name = quote(def.name);
  const isInt = def.type === 'int';
  const ok = isNumberText(value.trim(), isInt);
  if (!ok) {
    return {
      code: 'attribute.not-a-number',
      message: `${name} must be ${isInt ? 'a whole number' : 'a number'} for ${code}, not ${quote(value)}`,
    };
  }
  const n = Number(value);
  const min = def.minValue ?? undefined;
  const max = def.maxValue ?? undefined;
  if ((min === undefined || n >= min) && (max === undefined || n <= max)) return undefined;
  const range =
    min !== undefined && max !== undefined
      ? `${min} to ${max}`
      : min !== undefined
        ? `at least ${min}`
        : `at most ${max}`;
  return { code: 'attribute.out-of-range', message: `${name} is ${value}, outside ${range} for ${code}` };
}

function chars(n: number): string {
  return n === 1 ? '1 character' : `${n} characters`;
}
