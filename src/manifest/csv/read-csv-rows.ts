/**
 * Re-reads a CSV input's data rows, cells verbatim (untrimmed, unmapped), for result.csv:
 * "the input's own columns first, verbatim". Same decoding, delimiter, skipped lines and
 * blank-line rules as readCsvDocument, so `row` equals the numbers in CsvOrigin.itemRows.
 * Streaming: memory stays flat however long the file is.
 */
import { createReadStream } from 'node:fs';
import { CsvScanner } from './csv-scanner.js';
import { dialectOf } from './dialect.js';
import { csvLimitsOf } from '../read-input.js';
import { CSV_CHUNK_BYTES, type ReadCsvOptions } from './read-csv.js';

export interface CsvRow {
  /** Physical line number in the original file where the record starts (header of a plain file = 1). */
  row: number;
  cells: string[];
}

/** Data rows (not the header), in file order. Stops quietly where the file stops parsing or meets a limit. */
export async function* readCsvRows(file: string, opts: ReadCsvOptions = {}): AsyncGenerator<CsvRow> {
  const batch: CsvRow[] = [];
  const scanner = new CsvScanner(
    dialectOf(opts.mapping),
    {
      header: () => {},
      record: (cells, row) => batch.push({ row, cells }),
    },
    csvLimitsOf(opts.csv),
  );
  for await (const chunk of createReadStream(file, { highWaterMark: CSV_CHUNK_BYTES })) {
    scanner.push(chunk as Buffer);
    if (batch.length > 0) {
      yield* batch.splice(0, batch.length);
    }
    if (scanner.stopped) break;
  }
  await scanner.finish();
  yield* batch.splice(0, batch.length);
}

/** The decoded header cells, verbatim, and their row; undefined for an empty file. */
export async function readCsvHeader(
  file: string,
  opts: ReadCsvOptions = {},
): Promise<{ header: string[]; row: number } | undefined> {
  let found: { header: string[]; row: number } | undefined;
  const scanner = new CsvScanner(
    dialectOf(opts.mapping),
    {
      header: (cells, row) => {
        found = { header: cells, row };
      },
      record: () => {},
    },
    csvLimitsOf(opts.csv),
  );
  const stream = createReadStream(file, { highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream) {
      scanner.push(chunk as Buffer);
      if (found !== undefined) return found;
      if (scanner.stopped) return undefined;
    }
    await scanner.finish();
    return found;
  } finally {
    stream.destroy();
  }
}
