import { open } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { type NewFileOptions, writeFileAtomic } from '../storage/atomic-write.js';
import { ByteOutput } from './byte-output.js';
import { CsvRecordScanner, LineEnd, NotVerbatim } from './csv-record-scanner.js';
import { neutraliseCell } from './neutralise.js';
import { RowCells, type RowCellsTable } from './row-cells.js';

/**
 * result.csv of a comma-separated UTF-8 input, its records' bytes copied as they are
 * (write-result-csv.ts says when). Imports only what the copy needs: result-csv-worker.ts runs
 * this same code in a worker thread for a big input, while the main thread writes result.json.
 */

export const CSV_RESULT_COLUMNS = ['_row', '_status', '_jobNumber', '_newAssetSku', '_needsArtwork', '_error'] as const;

/** Read size for the verbatim copy, and how much output is gathered per write. */
const COPY_CHUNK_BYTES = 1 << 20;
const COMMA = 0x2c;
const LF = 0x0a;

/** What a verbatim copy needs: plain data, so a worker thread can be handed it. */
export interface VerbatimCopy {
  /** Where result.csv goes (written as `file` says: staged, the caller renames it). */
  path: string;
  /** The input file. */
  input: string;
  /** The input's header, as the reader saw it. */
  header: string[];
  cells: RowCellsTable;
  /** Mapped exports: rows that are not items (skipped, ignored) are copied too. */
  everyRow: boolean;
  file?: NewFileOptions;
}

/** Writes result.csv by copying; throws NotVerbatim (and leaves no file) when the copy cannot mirror the reader. */
export async function writeVerbatimCsv(copy: VerbatimCopy): Promise<void> {
  await writeFileAtomic(
    copy.path,
    verbatimChunks(copy.input, copy.header, new RowCells(copy.cells), copy.everyRow),
    copy.file,
  );
}

export function padTo(cells: string[], width: number): string[] {
  return cells.length >= width ? cells : [...cells, ...new Array<string>(width - cells.length).fill('')];
}

/**
 * Each data record's bytes as they are, then the result cells. Throws NotVerbatim (before
 * anything is renamed into place) when the records found are not exactly the item rows the
 * reader found: the caller then re-parses instead. `everyRow` (mapped exports): rows that are
 * not items (skipped, ignored) are copied too, with their own result cells, as the re-parse does.
 */
async function* verbatimChunks(
  file: string,
  header: string[],
  results: RowCells,
  everyRow: boolean,
): AsyncGenerator<string | Uint8Array> {
  yield stringify([[...header, ...CSV_RESULT_COLUMNS].map(neutraliseCell)]);
  const out = new ByteOutput();
  const scanner = new CsvRecordScanner();
  const width = header.length;
  let nextRow = 1;
  let sawHeader = false;
  let copied = 0;

  const take = (data: Buffer, start: number): void => {
    const row = nextRow;
    nextRow = row + 1 + scanner.breaks;
    if (scanner.blank) return;
    if (!sawHeader) {
      sawHeader = true;
      return;
    }
    if (results.isItem(row)) copied++;
    else if (!everyRow) throw new NotVerbatim(`row ${row} is not one the reader kept`);
    if (scanner.reparse) {
      const lineEnd = scanner.lineEnd === LineEnd.CRLF ? '\r\n' : '\n';
      const parsed = parse(data.subarray(start, scanner.end), {
        delimiter: ',',
        relax_quotes: true,
        relax_column_count: true,
        record_delimiter: lineEnd,
      }) as string[][];
      if (parsed.length !== 1) throw new NotVerbatim(`row ${row} re-parses as ${parsed.length} records`);
      out.text(stringify([[...padTo(parsed[0], width), ...results.cells(row)].map(neutraliseCell)]));
      return;
    }
    // The row number is digits (neutraliseCell and csvCell leave it as it is): written as
    // bytes, like the rest, so a row makes no garbage but what the scan needs.
    out.bytes(data, start, scanner.end);
    if (scanner.cells < width) out.text(','.repeat(width - scanner.cells));
    out.byte(COMMA);
    out.digits(row);
    out.text(results.tailText(row));
    out.byte(LF);
  };

  // One reused read buffer: the unscanned tail of a read is moved to its front and the next
  // read lands after it. A fresh buffer per read (a read stream, Buffer.concat for the tail)
  // made ~2 MB of short-lived off-heap memory per MB of input, which RSS showed.
  // Sized to the file up to COPY_CHUNK_BYTES: a one-order input (`watch`) gets a few kB, not
  // 1 MB of off-heap memory that brings the next old-generation collection nearer.
  let buf: Buffer | undefined;
  let held = 0; // bytes at the front of buf not yet scanned
  let first = true;
  const handle = await open(file, 'r');
  try {
    buf = Buffer.allocUnsafe(Math.min(COPY_CHUNK_BYTES, Math.max(4096, (await handle.stat()).size + 1)));
    for (;;) {
      if (held === buf.length) {
        const grown = Buffer.allocUnsafe(buf.length * 2); // a record longer than the buffer
        buf.copy(grown, 0, 0, held);
        buf = grown;
      }
      const { bytesRead } = await handle.read(buf, held, buf.length - held, null);
      const eof = bytesRead === 0;
      const data = buf.subarray(0, held + bytesRead);
      let pos = 0;
      if (first) {
        if (data.length < 3 && !eof) {
          held = data.length;
          continue;
        }
        first = false;
        if (data.length >= 2 && ((data[0] === 0xff && data[1] === 0xfe) || (data[0] === 0xfe && data[1] === 0xff)))
          throw new NotVerbatim('UTF-16 input');
        if (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) pos = 3;
      }
      while (pos < data.length && scanner.scan(data, pos, eof)) {
        take(data, pos);
        pos = scanner.next;
      }
      if (eof) break;
      held = data.length - pos;
      if (held > 0 && pos > 0) buf.copyWithin(0, pos, data.length);
      if (out.length >= COPY_CHUNK_BYTES) yield out.flush();
    }
  } finally {
    await handle.close();
  }
  if (copied !== results.itemRowCount)
    throw new NotVerbatim(`found ${copied} item rows, the reader ${results.itemRowCount}`);
  if (out.length > 0) yield out.flush();
}
