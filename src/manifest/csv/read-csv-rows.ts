/**
 * Reads a CSV input's records again, for result.csv ("the input's own columns first"), through
 * the same grammar, decoding, delimiter, skipped lines, blank-line rules and limits as
 * readCsvDocument, so each row number equals the reader's (CsvOrigin.itemRows). Streaming:
 * memory stays flat however long the file is.
 */
import { open } from 'node:fs/promises';
import { csvLimitsOf } from '../read-input.js';
import { type CsvScanHandlers, CsvScanner } from './csv-scanner.js';
import { dialectOf } from './dialect.js';
import { fileChunks, type ReadCsvOptions } from './read-csv.js';

/**
 * Hands every record to `handlers` (synchronously, cells untrimmed and unmapped; with `keepText`,
 * a strict record's own text too), yielding after each chunk so the caller can write out what it
 * gathered. Stops quietly where the file stops parsing or meets a limit; throws when it cannot be read.
 */
export async function* scanCsvFile(
  file: string,
  opts: ReadCsvOptions & { keepText?: boolean },
  handlers: CsvScanHandlers,
): AsyncGenerator<void> {
  const limits = csvLimitsOf(opts.csv);
  const scanner = new CsvScanner(dialectOf(opts.mapping), handlers, { limits, keepText: opts.keepText });
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
