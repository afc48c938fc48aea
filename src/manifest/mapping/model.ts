/**
 * An ERP mapping (`--mapping erp.yaml`): how a foreign CSV export becomes the default CSV
 * template. Shape and meaning are fixed by schemas/mapping.schema.json; `loadMapping` returns
 * this after validating. Tests and library users may also build one in code.
 */
import type { SourceLocation } from '../model.js';

/** Text encodings a mapping may declare. `utf-16` means: by BOM, little-endian without one. */
export type MappingEncoding = 'utf-8' | 'utf-16' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/** A constant or mapped value as written in the mapping; turned into cell text before typing. */
export type MappingScalar = string | number | boolean;

/** A mapping file's keys (each described in the schema and in docs/mappings.md), then what loadMapping adds. */
export interface Mapping {
  version?: 1;
  delimiter?: string;
  encoding?: MappingEncoding;
  sheet?: string;
  skipRows?: number;
  columns?: Record<string, string>;
  constants?: Record<string, MappingScalar>;
  values?: Record<string, Record<string, MappingScalar>>;
  sizeColumns?: Record<string, string>;
  attributeColumns?: Record<string, string>;
  ignoreColumns?: string[];
  optionalColumns?: string[];
  /** JSONata: one row → several lines (each element is `$line` to fields and skip rules). */
  lines?: string;
  variants?: MappingVariant[];
  extends?: string;
  ignoreUnmapped?: boolean;
  fields?: Record<string, string>;
  skip?: SkipRule[];
  fillDown?: { columns: string[]; key?: string };
  lookups?: Record<string, { file: string; key?: string }>;
  mergeLines?: boolean;
  /** Cells guarded against spreadsheet formulas (`'+1 713…`): `mark` before one of `before` is dropped. */
  unguard?: { mark: string; before: string };
  /** Columns the export writes as digits zero-padded to at least this many (`Order ID: 5` for `00412`). */
  zeroPaddedColumns?: Record<string, number>;
  /** Set by loadMapping: where each `fields`/`skip` expression was written (`fields.code`, `skip[0]`). */
  expressionLocations?: Record<string, SourceLocation>;
  /** Internal (expression mappings): template field → the export column messages name. */
  columnLabels?: Record<string, string>;
  /** Set by loadMapping: the lookup tables, read. */
  lookupTables?: Record<string, LookupTable>;
  /** Set by loadMapping: the mapping file, for messages and locations. */
  file?: string;
  /** Set by loadMapping: the shipped preset this mapping is, or extends (directly or through another file). */
  preset?: string;
  /** Set by loadMapping: where each constant was written, so errors in it point there. */
  constantLocations?: Record<string, SourceLocation>;
}

/** A form of the export (a platform or plugin version), chosen by the columns of the header. */
export interface MappingVariant {
  name: string;
  /** Columns that all must be in the header for this variant. */
  when: string[];
  optionalColumns?: string[];
  fields?: Record<string, string>;
  skip?: SkipRule[];
  fillDown?: { columns: string[]; key?: string };
  lines?: string;
}

export interface SkipRule {
  /** JSONata condition on the row; true skips it. */
  when: string;
  /** `order`: the whole order the row belongs to; `row` (default): this row only. */
  scope?: 'row' | 'order';
  /** Shown in the reports as the skip's reason. */
  reason: string;
}

/** A lookup table read from CSV: key cell → the row (column name → cell). */
export interface LookupTable {
  file: string;
  rows: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

/**
 * Does this mapping need the expression path (anything beyond renames, constants and values)?
 * Here, with the types, so that a reader can ask without loading the expression code (jsonata,
 * a noticeable part of a start).
 */
export function isExpressionMapping(m: Mapping | undefined): m is Mapping {
  return (
    m !== undefined &&
    (m.fields !== undefined ||
      m.skip !== undefined ||
      m.fillDown !== undefined ||
      m.ignoreUnmapped !== undefined ||
      m.lookups !== undefined ||
      m.lines !== undefined ||
      m.variants !== undefined ||
      m.extends !== undefined ||
      m.unguard !== undefined ||
      m.zeroPaddedColumns !== undefined)
  );
}
