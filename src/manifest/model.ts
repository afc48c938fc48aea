import type { StringColumn } from '../core/string-column.js';

/**
 * The one Manifest model that YAML, JSON, CSV and ERP-mapped CSV all become.
 *
 * Values are plain data shaped like the API's job create request (field names unchanged),
 * with the human values (country names, delivery labels, state names) still unresolved.
 * Source locations are NOT stored per value: a 1,000,000-row CSV would need millions of
 * location objects. Instead each manifest carries a SourceMap that computes the location
 * of any field path on demand (from the YAML AST, or from a CSV item's row number and the
 * field → column-name table).
 */

/** Where a value came from. YAML/JSON: line + column; CSV: row + column name. All 1-based. */
export interface SourceLocation {
  file: string;
  line?: number;
  column?: number;
  /** CSV: physical row in the original file, header row = 1. */
  row?: number;
  /** CSV: the column header in the original file (for ERP input: the ERP's own column name). */
  columnName?: string;
}

/** A readable field path: `jobs[3].items[0].quantity`, `jobs[0].deliveryAddress.country`. */
export type FieldPath = string;

export type Severity = 'error' | 'warning';

/** Errors are values with a location; they are thrown only at the edges. */
export interface Diagnostic {
  severity: Severity;
  /** Stable machine-readable code, e.g. `schema.required`, `quantity.below-minimum`, `api.validation`. */
  code: string;
  message: string;
  field?: FieldPath;
  source?: SourceLocation;
}

export interface SourceMap {
  /** Location of the value at `path`, or of its nearest existing ancestor. */
  locate(path: FieldPath): SourceLocation;
  /** Location of the key of the entry at `path` (unknown keys), where the format has keys. */
  locateKey?(path: FieldPath): SourceLocation;
}

export interface ManifestDeliveryAddress {
  /** A delivery option code OR its label (resolved to the code before sending). */
  deliveryMethod?: string;
  shippingInstructions?: string;
  contactName?: string;
  organisation?: string;
  phone?: string;
  mobile?: string;
  emailAddress?: string;
  isSaturdayDelivery?: boolean;
  streetAddress?: string;
  address2?: string;
  suburb?: string;
  city?: string;
  /** Name or abbreviation (resolved to the lookup's abbreviation). */
  state?: string;
  stateCode?: string;
  postalCode?: string;
  countryCodeISO2?: string;
  /** Name, ISO2 or ISO3 (resolved to countryCodeISO2). */
  country?: string;
}

export interface ManifestItem {
  itemType: 'PriceCode' | 'Asset' | 'Stock' | string;
  code: string;
  quantity?: number;
  customerReference?: string;
  groupHead?: string;
  group?: string;
  // PriceCode
  attributes?: Record<string, string>;
  externalArtworkUrl?: string;
  /** PriceCode only: a file of the manifest's folder, uploaded to the artwork store and sent as externalArtworkUrl. */
  artwork?: string;
  externalId?: string;
  isSample?: boolean;
  // Asset
  garment?: string;
  comment?: string;
  // Stock
  variantCode?: string;
  sizeQuantities?: Record<string, number>;
}

export interface ManifestJob {
  /** Required, unique in the manifest: the job's identity (ledger key). */
  orderNumber: string;
  description?: string;
  orderComment?: string;
  /** YYYY-MM-DD as written; omitted means the earliest ship date. */
  dateDue?: string;
  mustDate?: boolean;
  timeSensitive?: boolean;
  promocode?: string;
  customerUserId?: number;
  orderGroup?: string;
  orderGroupSequence?: number;
  locationCodeOverride?: string;
  deliveryAddress: ManifestDeliveryAddress;
  items: ManifestItem[];
  /** Declarative cancel of an already-submitted job. */
  cancel?: boolean;
}

export type ManifestFormat = 'yaml' | 'json' | 'csv' | 'xlsx';

/**
 * A manifest's jobs as every consumer reads them: by index and in order, nothing more. A plain
 * array is one (YAML, JSON, .xlsx, a mapped or small CSV); a big template CSV's is a view that
 * reads its jobs from the file a window at a time (csv/job-view.ts), so no consumer may keep,
 * sort or change the list itself, and a job read twice may be two equal objects.
 */
export interface JobList {
  readonly length: number;
  at(index: number): ManifestJob | undefined;
  /**
   * Each job's order number (`at(index).orderNumber` where it is a string), where the list knows
   * them without reading the jobs (a windowed CSV's index).
   */
  readonly orderNumbers?: StringColumn | undefined;
  [Symbol.iterator](): Iterator<ManifestJob>;
}

/** `Jobs`: the readers' manifests hold an array; the pipeline's may hold a windowed view (JobList). */
export interface Manifest<Jobs extends JobList = ManifestJob[]> {
  /** The input's path as the user gave it (used in messages and report names). */
  file: string;
  format: ManifestFormat;
  /** sha256 of the input's bytes, hex. */
  sha256: string;
  /** Jobs in manifest order, with `defaults` already deep-merged (job values win). */
  jobs: Jobs;
  sources: SourceMap;
  /**
   * CSV inputs only: how to find each item's original row, so reports can point at it and
   * result.csv can copy the input's own columns verbatim (by re-reading the file, not by
   * keeping every cell in memory).
   */
  csv?: CsvOrigin;
  /** Rows an ERP mapping's skip rules left out (cancelled orders, fee lines), with the reasons. */
  skipped?: SkippedRows[];
  /** The shipped preset a shop export was read through (given, extended or recognised), for messages. */
  preset?: string;
}

/** Rows a mapping left out: a whole order, or lines of one; reported with status `skipped`. */
export interface SkippedRows {
  reason: string;
  scope: 'row' | 'order';
  orderNumber?: string;
  /** Physical rows of the input. */
  rows: number[];
}

export interface CsvOrigin {
  /** The original file's header cells, verbatim. */
  header: string[];
  /** Rows to skip before the header (ERP mappings). */
  skipRows: number;
  /** Per job index, per item index: the item's physical row number in the original file. */
  itemRows: number[][];
  /** Rows merged into another line of their order (ERP mappings): [row, the row of the line kept]. */
  mergedRows?: Array<[number, number]>;
  /** Delimited text: the separator and encoding it was read in, as a mapping declared them or the file showed them. */
  read?: CsvRead;
}

/** How a delimited-text input was read: what reads it again the same way, and writes result.csv to match. */
export interface CsvRead {
  delimiter: string;
  encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';
}

/** The outcome of reading one input: a manifest (possibly with errors) or only errors. */
export interface ReadResult<Jobs extends JobList = ManifestJob[]> {
  manifest?: Manifest<Jobs>;
  diagnostics: Diagnostic[];
  /**
   * A windowed read's findings on its jobs, kept out of memory and read back a window of jobs at
   * a time (csv/spilled-findings.ts); `diagnostics` then holds only the findings on no job.
   */
  jobFindings?: JobFindings;
}

/**
 * Findings on a manifest's jobs held outside memory: which jobs they refuse, and each job's
 * findings, read back a window of jobs at a time, each job's in the order the read gives them.
 */
export interface JobFindings {
  /** Whether job `j` has an error among its findings. */
  refuses(j: number): boolean;
  /**
   * The findings on the jobs of job `j`'s window, by job (a job without any is absent): the
   * first time a job of that window is asked for; undefined afterwards.
   */
  take(j: number): Map<number, Diagnostic[]> | undefined;
  /** Lets them go (the temporary file they are kept in); nothing is read back afterwards. */
  close(): void;
}

/**
 * What a format reader (YAML, JSON, CSV, ERP CSV) produces before validation: the raw
 * document shaped like the manifest schema (`{ version, defaults?, jobs: [...] }`), values as
 * written (strings stay strings), plus a SourceMap for locating any path in it. One validation
 * path (schema/) then serves every format.
 */
export interface RawDocument {
  file: string;
  format: ManifestFormat;
  sha256: string;
  /** Undefined when the file could not be parsed at all (diagnostics say why). */
  doc?: unknown;
  sources: SourceMap;
  csv?: CsvOrigin;
  skipped?: SkippedRows[];
  /** Parse-level problems: syntax, duplicate keys, unknown CSV columns, encoding, size caps. */
  diagnostics: Diagnostic[];
}
