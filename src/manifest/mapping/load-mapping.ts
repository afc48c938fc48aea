/**
 * Reads an ERP mapping file (YAML, or JSON — a YAML subset) and validates it against
 * schemas/mapping.schema.json. A mapping that is itself wrong is a configuration error:
 * it throws UsageError (exit code 2) naming `file:line:col` and the field, because no input
 * can be judged with a broken mapping.
 */
import { readFile } from 'node:fs/promises';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { LineCounter, parseDocument, isScalar, type Document, type Node as YamlNode } from 'yaml';
import { UsageError } from '../../core/errors.js';
import { formatPath, pointerKeys } from '../field-path.js';
import type { SourceLocation } from '../model.js';
import { YamlSourceMap } from '../yaml/yaml-source-map.js';
import { didYouMeanName } from '../../core/suggest.js';
import {
  ATTR_PREFIX,
  COLUMN_NAME_MATCHING,
  SIZE_PREFIX,
  TEMPLATE_NAME_MATCHING,
  templateNames,
} from '../csv/template.js';
import { analyseExpression, ExpressionError } from './expressions.js';
import type { LookupTable, Mapping, MappingVariant } from './model.js';
import { PRESETS_DIR, presetPath } from './presets-dir.js';
import { FolderFileError, readFileInFolder } from '../../storage/folder-file.js';
import { lateRequire } from '../../core/late-require.js';
import { plainValue } from '../../core/config/yaml-location.js';

// Three levels up from src/manifest/mapping/ and dist/manifest/mapping/ alike.
const MAPPING_SCHEMA_URL = new URL('../../../schemas/mapping.schema.json', import.meta.url);

let compiled: { validate: ValidateFunction; topKeys: string[] } | undefined;

/** Compiles the schema on first use only (ajv compilation is the expensive part). */
function validator(): { validate: ValidateFunction; topKeys: string[] } {
  if (compiled === undefined) {
    const schema = JSON.parse(readFileSync(MAPPING_SCHEMA_URL, 'utf8')) as { properties: Record<string, unknown> };
    // ajv is loaded here, not with this module: every command that may take --mapping imports
    // this module, and loading ajv's many files slowed every start (`npm run bench`).
    const { Ajv2020: Ajv } = lateRequire<{ Ajv2020: typeof Ajv2020 }>('ajv/dist/2020.js');
    const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
    compiled = { validate: ajv.compile(schema), topKeys: Object.keys(schema.properties) };
  }
  return compiled;
}

/** One problem in a mapping file (where, which key, what), before it becomes the UsageError's message. */
type MappingProblem = Partial<SourceLocation> & { field: string; message: string };

/** Where a value (by its path) or a map's key is written in the mapping file. */
interface Locate {
  value(path: Array<string | number>): SourceLocation;
  key(path: Array<string | number>, key: string): SourceLocation;
}

/** The presets there are, for messages. */
export function presetNames(): string[] {
  let names: string[];
  try {
    names = readdirSync(PRESETS_DIR);
  } catch {
    return [];
  }
  return names.flatMap((n) => (/^[a-z][a-z0-9-]*\.yaml$/.test(n) ? [n.slice(0, -'.yaml'.length)] : [])).sort();
}

export async function loadMapping(name: string): Promise<Mapping> {
  // A preset's name, unless a file of that name is beside it.
  const file = (statSync(name, { throwIfNoEntry: false })?.isFile() ? undefined : presetPath(name)) ?? name;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    // A name that could be a preset's, misspelt: say which presets there are.
    if (code === 'ENOENT' && /^[a-z][a-z0-9-]*$/.test(name)) {
      const names = presetNames();
      throw new UsageError(
        `--mapping ${name}: neither a preset (${names.join(', ')}) nor a mapping file` +
          didYouMeanName(name, names, COLUMN_NAME_MATCHING),
      );
    }
    throw new UsageError(`${file}: cannot read mapping file (${code})`);
  }
  return parseMapping(text, file);
}

/** Keys naming columns that are not expressions, whose place in the file messages point at. */
const LOCATED_KEYS = ['fillDown', 'ignoreColumns', 'zeroPaddedColumns'];

/**
 * Parses and validates mapping text; `file` is used in messages and locations only. `extendedBy`:
 * the mapping files that extend this one, so that an `extends` going round in a circle is refused.
 */
export function parseMapping(text: string, file: string, extendedBy: readonly string[] = []): Mapping {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text.replace(/^\uFEFF/, ''), { lineCounter, prettyErrors: false, uniqueKeys: true });
  const sources = new YamlSourceMap(file, doc, lineCounter);
  const locate: Locate = {
    value: (path) => sources.at(doc.getIn(path, true) as YamlNode | undefined),
    key: (path, key) => sources.locateKey(formatPath([...path, key])),
  };

  const problems: MappingProblem[] = [];
  for (const e of doc.errors) {
    problems.push({ ...sources.at(e.pos[0]), field: '(syntax)', message: e.message.split('\n')[0] });
  }
  if (problems.length > 0) throw usage(file, problems);

  const value = mappingValue(doc, file, sources);
  if (value === null || value === undefined) {
    throw usage(file, [{ line: 1, column: 1, field: '(root)', message: 'mapping file is empty' }]);
  }

  const { validate, topKeys } = validator();
  if (!validate(value)) {
    for (const err of collapse(validate.errors ?? [])) problems.push(describe(err, doc, locate, topKeys));
    throw usage(file, problems);
  }

  const own = value as Mapping;
  // `field: null` drops an inherited field: taken out here, and out of the merged mapping below.
  const blanked = Object.entries(own.fields ?? {}).flatMap(([k, v]) => (v === null ? [k] : []));
  for (const k of blanked) delete own.fields?.[k];
  problems.push(...crossCheck(own, locate));
  if (problems.length > 0) throw usage(file, problems);

  const expressionLocations: Record<string, SourceLocation> = {};
  const at = locate.value;
  for (const key of LOCATED_KEYS) if (doc.has(key)) expressionLocations[key] = at([key]);
  const lookupTables = readLookups(own, file, at, problems);
  const base =
    own.extends === undefined ? undefined : parent(own.extends, file, at(['extends']), [...extendedBy, resolve(file)]);
  const tables = { ...base?.lookupTables, ...lookupTables };
  const compile = (source: string, path: Array<string | number>, key: string) => {
    const node = doc.getIn(path, true) as YamlNode | undefined;
    const start = node?.range?.[0];
    expressionLocations[key] = at(path);
    try {
      analyseExpression(source);
    } catch (err) {
      if (!(err instanceof ExpressionError)) throw err;
      const quoted = isScalar(node) && (node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE') ? 1 : 0;
      const offset = start === undefined ? undefined : start + quoted + Math.max(0, (err.position ?? 1) - 1);
      const message = `bad expression: ${err.message}${backtickHint(source)}`;
      problems.push({ ...sources.at(offset), field: key, message });
    }
  };
  const compileAll = (m: Mapping | MappingVariant, path: Array<string | number>) => {
    const key = (rest: string) => (path.length === 0 ? rest : `${formatPath(path)}.${rest}`);
    for (const [target, source] of Object.entries(m.fields ?? {}))
      compile(source, [...path, 'fields', target], key(`fields.${target}`));
    (m.skip ?? []).forEach((rule, i) => {
      compile(rule.when, [...path, 'skip', i, 'when'], key(`skip[${i}]`));
    });
    if (m.lines !== undefined) compile(m.lines, [...path, 'lines'], key('lines'));
  };
  compileAll(own, []);
  (own.variants ?? []).forEach((v, i) => {
    compileAll(v, ['variants', i]);
  });
  if (problems.length > 0) throw usage(file, problems);
  const mapping = base === undefined ? own : extend(base, own);
  for (const k of blanked) {
    delete mapping.fields?.[k];
    for (const v of mapping.variants ?? []) delete v.fields?.[k];
  }
  mapping.expressionLocations = { ...base?.expressionLocations, ...expressionLocations };
  if (Object.keys(tables).length > 0) mapping.lookupTables = tables;
  markPreset(mapping, file);
  const constantLocations: Record<string, SourceLocation> = {};
  for (const key of Object.keys(own.constants ?? {})) constantLocations[key] = at(['constants', key]);
  return { ...mapping, file, constantLocations: { ...base?.constantLocations, ...constantLocations } };
}

/** `preset`: the shipped preset the mapping file is (presets/NAME.yaml); one that extends a preset has it from `extend`. */
function markPreset(mapping: Mapping, file: string): void {
  if (dirname(resolve(file)) === resolve(PRESETS_DIR)) mapping.preset = basename(file, '.yaml');
}

/**
 * The mapping `extends` names: a preset, or a mapping file in this one's folder (read as
 * lookup tables are: never through a link, never outside the folder).
 */
function parent(name: string, file: string, at: SourceLocation, chain: readonly string[]): Mapping {
  const refuse = (message: string) => usage(file, [{ ...at, field: 'extends', message }]);
  const preset = presetPath(name);
  const folder = dirname(resolve(file));
  const path = preset ?? resolve(folder, name);
  if (chain.includes(path)) throw refuse(`"${name}" extends this mapping again: a circle`);
  let text: string;
  try {
    text = preset === undefined ? readFileInFolder(folder, name) : readFileSync(preset, 'utf8');
  } catch (err) {
    const why = err instanceof FolderFileError ? `: the file ${err.message}` : '';
    throw refuse(
      `"${name}" is neither a preset (${presetNames().join(', ')}) nor a mapping file in the mapping's folder${why}`,
    );
  }
  return parseMapping(text, path, chain);
}

/** `own` on top of `base`: maps merged key by key (own wins), skip rules appended, the rest replaced. */
function extend(base: Mapping, own: Mapping): Mapping {
  const merged: Mapping = { ...base, ...own };
  for (const key of [
    'columns',
    'constants',
    'values',
    'sizeColumns',
    'attributeColumns',
    'fields',
    'lookups',
    'zeroPaddedColumns',
  ] as const) {
    if (base[key] !== undefined || own[key] !== undefined) {
      (merged as Record<string, unknown>)[key] = { ...base[key], ...own[key] };
    }
  }
  // `skip: []` drops the inherited rules; rules given are added after them.
  const dropSkip = own.skip !== undefined && own.skip.length === 0;
  if (base.skip !== undefined || own.skip !== undefined)
    merged.skip = dropSkip ? [] : [...(base.skip ?? []), ...(own.skip ?? [])];
  for (const key of ['ignoreColumns', 'optionalColumns'] as const) {
    if (base[key] !== undefined || own[key] !== undefined)
      merged[key] = [...new Set([...(base[key] ?? []), ...(own[key] ?? [])])];
  }
  // The inherited variants keep what this mapping says: its fields win over theirs, its skip
  // rules are added to theirs (`skip: []` drops them too), and its fillDown or lines replaces theirs.
  if (own.variants === undefined && base.variants !== undefined) {
    merged.variants = base.variants.map((v) => {
      const out: MappingVariant = { ...v, fields: { ...v.fields, ...own.fields } };
      if (dropSkip) out.skip = [];
      else if (v.skip !== undefined && own.skip !== undefined) out.skip = [...v.skip, ...own.skip];
      if (own.fillDown !== undefined) delete out.fillDown;
      if (own.lines !== undefined) delete out.lines;
      return out;
    });
  }
  delete merged.extends;
  return merged;
}

/**
 * A column name with spaces written without backticks reads as a syntax error at its second
 * word: say how to quote it.
 */
function backtickHint(source: string): string {
  const bare = source.replace(/`[^`]*`|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ');
  for (const m of bare.matchAll(/(?<![$\w.])[A-Za-z_][\w/#-]*(?: +[A-Za-z_#][\w/#-]*)+/g)) {
    // JSONata's own words split a run: `Name and Shipping Method` names `Shipping Method`.
    for (const part of m[0].split(/(?:^| +)(?:and|or|in|mod)(?: +|$)/)) {
      if (/ /.test(part.trim())) return `; a column name with spaces goes in backticks: \`${part.trim()}\``;
    }
  }
  return '';
}

/** Reads each lookup table: a CSV file inside the mapping's folder, keyed by its `key` column. */
function readLookups(
  m: Mapping,
  file: string,
  at: (path: Array<string | number>) => SourceLocation,
  problems: MappingProblem[],
): Record<string, LookupTable> {
  const tables: Record<string, LookupTable> = {};
  const folder = dirname(resolve(file));
  for (const [name, spec] of Object.entries(m.lookups ?? {})) {
    const where = at(['lookups', name, 'file']);
    const problem = (message: string) => problems.push({ ...where, field: `lookups.${name}.file`, message });
    const path = resolve(folder, spec.file);
    let records: string[][];
    try {
      records = parseCsv(readFileInFolder(folder, spec.file).replace(/^\uFEFF/, ''), {
        skip_empty_lines: true,
        relax_column_count: true,
      }) as string[][];
    } catch (err) {
      // The message names the file and what is wrong, never a line of it: the file may not be ours.
      if (err instanceof FolderFileError) problem(`lookup file "${spec.file}" ${err.message}`);
      else problem(`"${spec.file}" is not valid CSV (${(err as { code?: string }).code ?? 'unreadable'})`);
      continue;
    }
    const header = (records[0] ?? []).map((h) => h.trim());
    const keyIndex = spec.key === undefined ? 0 : header.indexOf(spec.key);
    if (keyIndex < 0) {
      problem(`"${spec.file}" has no column "${spec.key}" in its first line`);
      continue;
    }
    const rows = new Map<string, Record<string, string>>();
    for (const record of records.slice(1)) {
      const row: Record<string, string> = {};
      header.forEach((h, i) => {
        row[h] = (record[i] ?? '').trim();
      });
      const key = row[header[keyIndex]];
      if (key !== '' && !rows.has(key)) rows.set(key, row);
    }
    tables[name] = { file: path, rows };
  }
  return tables;
}

/** Checks JSON Schema cannot express: one source column, one field; one field, one source. */
function crossCheck(m: Mapping, locate: Locate): MappingProblem[] {
  const problems: MappingProblem[] = [];
  const sourceOf = new Map<string, string>(); // source column → section it appears in
  const targetOf = new Map<string, string>(); // template field → source column
  const sections: Array<[string, Record<string, string> | undefined, (v: string) => string]> = [
    ['columns', m.columns, (v) => v],
    ['sizeColumns', m.sizeColumns, (v) => SIZE_PREFIX + v],
    ['attributeColumns', m.attributeColumns, (v) => ATTR_PREFIX + v],
  ];
  for (const [section, entries, toTarget] of sections) {
    for (const [source, raw] of Object.entries(entries ?? {})) {
      const at = locate.key([section], source);
      const earlier = sourceOf.get(source);
      if (earlier !== undefined) {
        problems.push({
          ...at,
          field: `${section}.${source}`,
          message: `source column "${source}" is already mapped in ${earlier}`,
        });
      }
      sourceOf.set(source, section);
      const target = toTarget(raw);
      const other = targetOf.get(target);
      if (other !== undefined) {
        problems.push({
          ...at,
          field: `${section}.${source}`,
          message: `"${source}" and "${other}" both map to ${target}; keep one`,
        });
      }
      targetOf.set(target, source);
    }
  }
  (m.ignoreColumns ?? []).forEach((source, i) => {
    const section = sourceOf.get(source);
    if (section !== undefined) {
      problems.push({
        ...locate.value(['ignoreColumns', i]),
        field: `ignoreColumns[${i}]`,
        message: `"${source}" is both mapped (in ${section}) and ignored`,
      });
    }
  });
  return problems;
}

/** `anyOf` failures produce one error per branch plus the anyOf itself: keep only the anyOf. */
function collapse(errors: ErrorObject[]): ErrorObject[] {
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.schemaPath));
  const out = errors.filter((e) => {
    if (e.keyword === 'anyOf') return true;
    for (const p of anyOfPaths) if (e.schemaPath.startsWith(p.slice(0, -'anyOf'.length))) return false;
    return true;
  });
  // propertyNames reports the name error and a wrapper error; the wrapper adds nothing.
  return out.filter((e) => e.keyword !== 'propertyNames');
}

function describe(err: ErrorObject, doc: Document, locate: Locate, topKeys: string[]): MappingProblem {
  const path = pointerKeys(err.instancePath);
  const field = (segments: string[]): string => (segments.length === 0 ? '(root)' : segments.join('.'));

  if (err.keyword === 'additionalProperties') {
    const key = String((err.params as { additionalProperty: string }).additionalProperty);
    const hint = path.length === 0 ? didYouMeanName(key, topKeys, COLUMN_NAME_MATCHING) : '';
    return { ...locate.key(path, key), field: field([...path, key]), message: `unknown key "${key}"${hint}` };
  }
  // A name (propertyNames) or a value (anyOf) that is no template target.
  const propertyName = (err as ErrorObject & { propertyName?: string }).propertyName;
  if (propertyName !== undefined || err.keyword === 'anyOf') {
    const bad = propertyName ?? String(doc.getIn(path) ?? '');
    return {
      ...(propertyName === undefined ? locate.value(path) : locate.key(path, propertyName)),
      field: field(propertyName === undefined ? path : [...path, propertyName]),
      message:
        `"${bad}" is not a template field (a default CSV column name, attr:NAME or size:CODE)` +
        didYouMeanName(bad, templateNames(), TEMPLATE_NAME_MATCHING),
    };
  }
  if (err.keyword === 'enum') {
    const allowed = (err.params as { allowedValues: unknown[] }).allowedValues.map(String);
    const hint = didYouMeanName(String(doc.getIn(path)), allowed, COLUMN_NAME_MATCHING);
    return { ...locate.value(path), field: field(path), message: `must be one of ${allowed.join(', ')}${hint}` };
  }
  return { ...locate.value(path), field: field(path), message: err.message ?? err.keyword };
}

/** The mapping file's plain value; an alias that cannot be expanded is a problem at the alias (plainValue). */
function mappingValue(doc: Document.Parsed, file: string, sources: YamlSourceMap): unknown {
  const plain = plainValue(doc);
  if ('problem' in plain) throw usage(file, [{ ...sources.at(plain.at), field: '(syntax)', message: plain.problem }]);
  return plain.value;
}

function usage(file: string, problems: MappingProblem[]): UsageError {
  const sorted = [...problems].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  // The schema may report one mistake by two rules in the same words: say it once.
  const all = [
    ...new Set(
      sorted.map(
        (p) => `${p.line === undefined ? file : `${file}:${p.line}:${p.column ?? 1}`}: ${p.field}: ${p.message}`,
      ),
    ),
  ];
  const lines = all.slice(0, 20);
  if (all.length > 20) lines.push(`… and ${all.length - 20} more problems in ${file}`);
  // One problem per line, each starting with its location, like errors.txt.
  return new UsageError(lines.join('\n'));
}
