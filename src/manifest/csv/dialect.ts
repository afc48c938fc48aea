/**
 * The physical reading rules of one CSV input: separator, text encoding, lines before the
 * header. The default template is comma-separated UTF-8; an ERP mapping may say otherwise.
 * Both the document reader and the row re-reader (for result.csv) use the same dialect, so
 * their row numbers always agree.
 */
import type { Mapping, MappingEncoding } from '../mapping/model.js';

export interface CsvDialect {
  delimiter: string;
  /** Declared encoding; a byte-order mark in the file overrides it. */
  encoding: MappingEncoding;
  /** Physical lines skipped before the header row. */
  skipRows: number;
}

export function dialectOf(mapping?: Mapping): CsvDialect {
  return {
    delimiter: mapping?.delimiter ?? ',',
    encoding: mapping?.encoding ?? 'utf-8',
    skipRows: mapping?.skipRows ?? 0,
  };
}
