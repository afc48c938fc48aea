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
  /** Set by loadMapping: the mapping file, for messages and locations. */
  file?: string;
  /** Set by loadMapping: where each constant was written, so errors in it point there. */
  constantLocations?: Record<string, SourceLocation>;
}
