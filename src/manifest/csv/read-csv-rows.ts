/**
 * Reads a CSV input's records again, for result.csv ("the input's own columns first"), through
 * the same grammar, decoding, delimiter, skipped lines, blank-line rules and limits as
 * readCsvDocument, so each row number equals the reader's (CsvOrigin.itemRows). Streaming:
 * memory stays flat however long the file is.
 */
import { open } from 'node:fs/promises';
import { type CsvLimits, csvLimitsOf } from '../read-input.js';
import { type CsvScanHandlers, CsvScanner } from './csv-scanner.js';
import type { CsvDialect } from './dialect.js';
import { fileChunks } from './read-csv.js';

export interface CsvRereadOptions {
  /** The limits the input was read with (default DEFAULT_CSV_LIMITS). */
  limits?: Partial<CsvLimits>;
  /** Hand each strict record's own text to `record` too. */
  keepText?: boolean;
}

/**
 * Hands every record to `handlers` (synchronously, cells untrimmed and unmapped), yielding after
 * each chunk so the caller can write out what it gathered. Stops quietly where the file stops
 * parsing or meets a limit; throws when it cannot be read.
 */
export async function* scanCsvFile(
  file: string,
  dialect: CsvDialect,
  handlers: CsvScanHandlers,
  opts: CsvRereadOptions = {},
): AsyncGenerator<void> {
  const scanner = new CsvScanner(dialect, handlers, { limits: csvLimitsOf(opts.limits), keepText: opts.keepText });
  const handle = await open(file, 'r');
  try {
    for await (const chunk of fileChunks(handle)) {
      scanner.push(chunk);
      yield;
      if (scanner.stopped) break;
    }
  } finally {
    await handle.close();
  }
  await scanner.finish();
  yield;
}
