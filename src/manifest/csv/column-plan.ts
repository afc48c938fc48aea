/**
 * From a header row (and an optional ERP mapping) to a column plan: for each physical column,
 * which template field it fills and how; plus the mapping's constants, and the reverse table
 * field → original column name that source locations are computed from.
 *
 * Header names are matched exactly (after trimming), like YAML keys; a wrong one is an error
 * with a suggestion, because a silently ignored column is a lost field.
 */
import type { Diagnostic, SourceLocation } from '../model.js';
import type { Mapping } from '../mapping/model.js';
import { didYouMeanName, suggest } from '../../core/suggest.js';
import {
  ATTR_PREFIX,
  COLUMN_NAME_MATCHING,
  SIZE_PREFIX,
  TEMPLATE_BY_NAME,
  TEMPLATE_COLUMNS,
  TEMPLATE_NAME_MATCHING,
  templateNames,
  type CellType,
} from './template.js';

/** Where a binding's value goes. */
export const Kind = {
  Job: 0,
  Address: 1,
  Item: 2,
  Attribute: 3,
  Size: 4,
  Sizes: 5,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

export interface Binding {
  /** Physical column index; -1 for a mapping constant. */
  index: number;
  /** Template target: `city`, `attr:Colors`, `size:M`. */
  target: string;
  kind: Kind;
  /** Property name in the document: the field, the attribute name or the size code. */
  key: string;
  type: CellType;
  intern: boolean;
  /**
   * Job and address fields read from a column: slot in the per-job "row that set it" table
   * (numbered per file, so the table holds only the job columns the file has). -1 otherwise.
   */
  slot: number;
  /** Mapping `values` for this field: trimmed source text → text. */
  values?: Map<string, string>;
  /** Constants only: the value as cell text. */
  constant?: string;
  /** The original file's column name (for ERP input, the ERP's own name). */
  column?: string;
}

export interface ColumnPlan {
  /** Bindings for physical columns, in column order, orderNumber excluded. */
  columns: Binding[];
  /** The orderNumber binding (column or constant), if any. */
  orderNumber?: Binding;
  /** Constants from the mapping, applied where a row leaves the field blank. */
  constants: Binding[];
  /** Header width: rows of another length are reported. */
  width: number;
  /** Template target → original column name. */
  fieldColumns: Map<string, string>;
  /** Job/address field → its slot in the per-job table; `jobSlotCount` slots per job. */
  jobSlots: Map<string, number>;
  jobSlotCount: number;
  /** Template target → where the mapping wrote its constant. */
  constantLocations: Map<string, SourceLocation>;
  diagnostics: Diagnostic[];
}

/** The job-level (job and delivery address) template fields. */
export const JOB_FIELDS: ReadonlySet<string> = new Set(
  TEMPLATE_COLUMNS.filter((c) => c.level !== 'item').map((c) => c.name),
);

export const isJobLevel = (b: Binding): boolean => b.kind === Kind.Job || b.kind === Kind.Address;

/** A binding for a template target, or undefined when the target is not a template column. */
function bindTarget(target: string, index: number, column: string | undefined): Binding | undefined {
  const t = TEMPLATE_BY_NAME.get(target);
  if (t !== undefined) {
    const kind =
      t.level === 'job' ? Kind.Job : t.level === 'address' ? Kind.Address : t.type === 'sizes' ? Kind.Sizes : Kind.Item;
    return { index, target, kind, key: t.name, type: t.type, intern: t.intern, slot: -1, column };
  }
  // Attribute values are text (the API compares them as text: "4", not 4); sizes are quantities.
  const prefixed = [
    [ATTR_PREFIX, Kind.Attribute, 'string'],
    [SIZE_PREFIX, Kind.Size, 'integer'],
  ] as const;
  for (const [prefix, kind, type] of prefixed) {
    if (!target.startsWith(prefix) || target.length === prefix.length) continue;
    const key = target.slice(prefix.length).trim();
    return { index, target, kind, key, type, intern: kind === Kind.Attribute, slot: -1, column };
  }
  return undefined;
}

/**
 * Builds the plan. `file` and `headerRow` locate header-level diagnostics; the mapping file
 * is named where a problem lies in the mapping rather than in the input.
 */
export function planColumns(header: string[], file: string, headerRow: number, mapping?: Mapping): ColumnPlan {
  const at = (columnName?: string): SourceLocation => ({
    file,
    row: headerRow,
    ...(columnName !== undefined ? { columnName } : {}),
  });
  const { bindings, fieldColumns, diagnostics } = bindHeader(header, mapping, at);
  const constants: Binding[] = [];
  for (const [target, value] of Object.entries(mapping?.constants ?? {})) {
    const binding = bindTarget(target, -1, undefined);
    if (binding !== undefined) constants.push({ ...binding, constant: String(value) });
  }
  const jobSlots = new Map<string, number>();
  for (const b of bindings) {
    if (isJobLevel(b)) {
      b.slot = jobSlots.size;
      jobSlots.set(b.key, b.slot);
    }
  }
  const orderNumber =
    bindings.find((b) => b.target === 'orderNumber') ?? constants.find((b) => b.target === 'orderNumber');
  if (orderNumber === undefined) {
    diagnostics.push({
      severity: 'error',
      code: 'csv.missing-column',
      message: `there is no orderNumber column${mapping ? ' (nor a mapping to it)' : ''}: rows are grouped into jobs by orderNumber`,
      source: at(),
    });
  }
  return {
    columns: bindings.filter((b) => b !== orderNumber),
    ...(orderNumber !== undefined ? { orderNumber } : {}),
    constants: constants.filter((b) => b !== orderNumber),
    width: header.length,
    fieldColumns,
    jobSlots,
    jobSlotCount: Math.max(1, jobSlots.size),
    constantLocations: new Map(Object.entries(mapping?.constantLocations ?? {})),
    diagnostics,
  };
}

/** The header's columns bound to template targets, in column order, with what is wrong with the header. */
function bindHeader(
  header: string[],
  mapping: Mapping | undefined,
  at: (columnName?: string) => SourceLocation,
): { bindings: Binding[]; fieldColumns: Map<string, string>; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const bindings: Binding[] = [];
  const fieldColumns = new Map<string, string>();
  const seenColumns = new Map<string, number>();
  const ignored = new Set(mapping?.ignoreColumns ?? []);
  const valueMaps = new Map<string, Map<string, string>>();
  for (const [field, map] of Object.entries(mapping?.values ?? {})) {
    valueMaps.set(field, new Map(Object.entries(map).map(([k, v]) => [k, String(v)])));
  }
  const mappedSources = new Set<string>([
    ...Object.keys(mapping?.columns ?? {}),
    ...Object.keys(mapping?.sizeColumns ?? {}),
    ...Object.keys(mapping?.attributeColumns ?? {}),
  ]);
  const present = new Set(header.map((h) => h.trim()));
  const unmatchedSources = [...mappedSources].filter((s) => !present.has(s));
  const unmatchedHeaders: string[] = [];
  const problem = (code: string, message: string, source: SourceLocation): void => {
    diagnostics.push({ severity: 'error', code, message, source });
  };
  for (let index = 0; index < header.length; index++) {
    const name = header[index].trim();
    const previous = seenColumns.get(name);
    if (name === '') problem('csv.blank-column', `column ${index + 1} has no name in the header`, at());
    else if (previous !== undefined) {
      const message = `column "${name}" appears twice in the header (columns ${previous + 1} and ${index + 1})`;
      problem('csv.duplicate-column', message, at(name));
    }
    if (name === '' || previous !== undefined) continue;
    seenColumns.set(name, index);
    if (ignored.has(name)) continue;
    const target = (mapping && mappedTarget(mapping, name)) ?? name;
    const binding = bindTarget(target, index, name);
    if (binding === undefined) {
      unmatchedHeaders.push(name);
      const unknown = unknownColumn(name, mapping, unmatchedSources);
      problem(unknown.code, unknown.message, at(name));
      continue;
    }
    const clash = fieldColumns.get(target);
    if (binding.key === '') {
      problem('csv.unknown-column', `column "${name}" names no attribute or size after the prefix`, at(name));
      continue;
    }
    if (clash !== undefined) {
      const keep = `keep one${mapping ? ' (or list one in ignoreColumns)' : ''}`;
      problem('csv.duplicate-column', `columns "${clash}" and "${name}" both give ${target}; ${keep}`, at(name));
      continue;
    }
    const values = valueMaps.get(target);
    if (values !== undefined) binding.values = values;
    fieldColumns.set(target, name);
    bindings.push(binding);
  }
  if (mapping !== undefined) {
    for (const source of [...unmatchedSources, ...[...ignored].filter((s) => !present.has(s))]) {
      const message =
        `the mapping${mapping.file ? ` (${mapping.file})` : ''} names column "${source}", which is not in the header` +
        didYouMeanName(source, unmatchedHeaders, COLUMN_NAME_MATCHING);
      problem('csv.mapping-column-missing', message, at());
    }
  }
  return { bindings, fieldColumns, diagnostics };
}

/** The template target a mapping gives a column (its columns, sizeColumns or attributeColumns). */
function mappedTarget(mapping: Mapping, name: string): string | undefined {
  if (mapping.columns?.[name] !== undefined) return mapping.columns[name];
  if (mapping.sizeColumns?.[name] !== undefined) return SIZE_PREFIX + mapping.sizeColumns[name];
  if (mapping.attributeColumns?.[name] !== undefined) return ATTR_PREFIX + mapping.attributeColumns[name];
  return undefined;
}

/** A header name no template target takes: `unmatchedSources`, the mapping's names not in the header. */
function unknownColumn(
  name: string,
  mapping: Mapping | undefined,
  unmatchedSources: string[],
): { code: string; message: string } {
  if (mapping !== undefined) {
    // Most likely the mapping misspells this column: suggest the mapping's unmatched names.
    const close = suggest(name, unmatchedSources, COLUMN_NAME_MATCHING);
    const hint = close === undefined ? '' : ` (the mapping names "${close}", which is not in the header: a typo?)`;
    return {
      code: 'csv.unmapped-column',
      message:
        `column "${name}" is not mapped${hint}; ` +
        `add it to columns, sizeColumns or attributeColumns${mapping.file ? ` in ${mapping.file}` : ''}, or list it in ignoreColumns`,
    };
  }
  let hint = '';
  if (/[;\t|]/.test(name)) {
    hint = '; the file looks separated by something other than commas: pass --mapping with a "delimiter"';
  } else if (/^(attr|size)\s*[:=_-]/i.test(name)) {
    hint = `; did you mean "${name.replace(/^(attr|size)\s*[:=_-]\s*/i, (_, p: string) => `${p.toLowerCase()}:`)}"?`;
  } else {
    hint = didYouMeanName(name, templateNames(), TEMPLATE_NAME_MATCHING);
  }
  return { code: 'csv.unknown-column', message: `unknown column "${name}"${hint}` };
}
