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

export interface Mapping {
  version?: 1;
  /** Field separator, default `,`. */
  delimiter?: string;
  /** Default `utf-8` (a UTF-8 or UTF-16 BOM is honoured whatever this says). */
  encoding?: MappingEncoding;
  /** Spreadsheet inputs (.xlsx): the sheet to read, by name. Default: the first sheet. */
  sheet?: string;
  /** Physical lines before the header row (report titles, export banners). Default 0. */
  skipRows?: number;
  /** Source column → template field (`orderNumber`, `code`, `attr:Colors`, `size:M`, …). */
  columns?: Record<string, string>;
  /** Template field → value for every row that does not give the field itself. */
  constants?: Record<string, MappingScalar>;
  /** Template field → (source value → value), e.g. `deliveryMethod: { GRND: UPS Ground }`. */
  values?: Record<string, Record<string, MappingScalar>>;
  /** Source column → size code: the cell is that size's quantity (→ sizeQuantities). */
  sizeColumns?: Record<string, string>;
  /** Source column → attribute name: the cell is that attribute's value (→ attributes). */
  attributeColumns?: Record<string, string>;
  /** Source columns to read past without complaint. */
  ignoreColumns?: string[];
  /** A preset name (`shopify`) or a mapping file (relative to this one) whose keys this one extends. */
  extends?: string;
  /** Every column neither mapped nor named in an expression is read past (no ignoreColumns list). */
  ignoreUnmapped?: boolean;
  /**
   * Template field (or `size`, `attr:NAME`, `size:CODE`) → JSONata expression evaluated on each
   * row (the row's cells by column name). A bare column name is the plain rename.
   */
  fields?: Record<string, string>;
  /** Rows or whole orders to leave out, each with the reason the reports show. */
  skip?: SkipRule[];
  /** Blank cells of continuation rows taken from the row above (ERPs that print order cells once). */
  fillDown?: { columns: string[]; key?: string };
  /** Lookup tables for `$lookup(name, key[, column])`: a CSV file beside the mapping. */
  lookups?: Record<string, { file: string; key?: string }>;
  /** Merge the lines of one order that name the same item (default true for expression mappings). */
  mergeLines?: boolean;
  /** Set by loadMapping: where each `fields`/`skip` expression was written (`fields.code`, `skip[0]`). */
  expressionLocations?: Record<string, SourceLocation>;
  /** Internal (expression mappings): template field → the export column messages name. */
  columnLabels?: Record<string, string>;
  /** Set by loadMapping: the lookup tables, read. */
  lookupTables?: Record<string, LookupTable>;
  /** Set by loadMapping: the mapping file, for messages and locations. */
  file?: string;
  /** Set by loadMapping: where each constant was written, so errors in it point there. */
  constantLocations?: Record<string, SourceLocation>;
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
      m.extends !== undefined)
  );
}
