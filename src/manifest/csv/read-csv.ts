/**
 * The CSV reader (default template, or any export through an ERP mapping): streams the file
 * once, hashing its bytes and building the manifest-shaped document as records arrive. Row
 * numbers everywhere (`CsvOrigin.itemRows`, source locations, diagnostics) are the scanner's:
 * physical lines of the original file, the numbers a text editor shows (csv-scanner.ts).
 */
import { createHash } from 'node:crypto';
import { type FileHandle, open } from 'node:fs/promises';
import type { Diagnostic, RawDocument } from '../model.js';
import type { Mapping } from '../mapping/model.js';
import { type CsvLimits, INPUT_CHANGED, INPUT_TOO_LARGE, unreadDocument } from '../read-input.js';
import { type CsvDialect, type CsvScanHandlers, CsvScanner, type CsvScanOptions, dialectOf } from './csv-scanner.js';
import { TemplateReader } from './document-builder.js';

export interface ReadCsvOptions {
  mapping?: Mapping;
  /** Caps on columns, record and file size; defaults DEFAULT_CSV_LIMITS. */
  csv?: Partial<CsvLimits>;
}

/**
 * Read size: as fast as bigger reads, and a lower peak RSS in `npm run bench:check`, because
 * chunks already parsed wait for a garbage collection before their memory is freed.
 */
export const CSV_CHUNK_BYTES = 64 * 1024;

export async function readCsvDocument(file: string, opts: ReadCsvOptions = {}): Promise<RawDocument> {
  const dialect = dialectOf(opts.mapping);
  const reader = await TemplateReader.open(file, dialect.skipRows, opts.mapping);
  const scanner = new CsvScanner(dialect, reader.rows, { limits: opts.csv });
  const hash = createHash('sha256');
  const failed = await readInto(file, scanner.limits, async (chunk) => {
    hash.update(chunk);
    scanner.push(chunk);
    await reader.drain();
    return scanner.stopped;
  });
  if (failed !== undefined) return unreadDocument(file, 'csv', failed);
  await scanner.finish();
  await reader.drain();
  // A file read only part-way (a syntax error, a limit) has no hash that could stand for it,
  // and no trustworthy document.
  const broken = scanner.stopped;
  const sha256 = broken ? '' : hash.digest('hex');
  const raw = reader.document({ file, format: 'csv', sha256, broken }, scanner.problems);
  if (raw.csv !== undefined) raw.csv.read = scanner.read;
  return raw;
}

/**
 * Reads a CSV input's records again, for result.csv ("the input's own columns first"), through
 * the same scanner, dialect and limits as readCsvDocument, so each row number equals the
 * reader's (CsvOrigin.itemRows): every record to `handlers` (synchronously, cells untrimmed and
 * unmapped), yielding after each chunk so the caller can write out what it gathered. Streaming:
 * memory stays flat however long the file is. Stops quietly where the file stops parsing or
 * meets a limit; throws when it cannot be read.
 */
export async function* scanCsvFile(
  file: string,
  dialect: CsvDialect,
  handlers: CsvScanHandlers,
  opts: CsvScanOptions & {
    /**
     * The SHA-256 of the bytes first read: a file read to its end whose bytes hash otherwise
     * (replaced or edited since) throws CsvInputChanged once it is read, so that no row of
     * another file is written beside this file's results.
     */
    sha256?: string;
  } = {},
): AsyncGenerator<void> {
  const scanner = new CsvScanner(dialect, handlers, opts);
  const hash = opts.sha256 ? createHash('sha256') : undefined;
  const handle = await open(file, 'r');
  try {
    for await (const chunk of fileChunks(handle)) {
      hash?.update(chunk);
      scanner.push(chunk);
      yield;
      if (scanner.stopped) break;
    }
  } finally {
    await handle.close();
  }
  await scanner.finish();
  // A file that stops parsing is not read to its end: its first read had no hash either.
  if (hash !== undefined && !scanner.stopped && hash.digest('hex') !== opts.sha256) throw new CsvInputChanged(file);
  yield;
}

/** scanCsvFile's: the file's bytes are no longer those first read. */
export class CsvInputChanged extends Error {
  readonly code = INPUT_CHANGED;
  constructor(file: string) {
    super(`${file} changed after it was read`);
  }
}

/**
 * Feeds the file's chunks to `take` until it returns true (stop) or the file ends. A file over
 * the size limit (when its size is known up front) or unreadable gives the error instead.
 */
export async function readInto(
  file: string,
  limits: CsvLimits,
  take: (chunk: Buffer) => Promise<boolean>,
  /** Called once the file is read, before it is closed (the job index takes the file's identity). */
  atEnd?: (handle: FileHandle) => Promise<void>,
): Promise<Diagnostic | undefined> {
  try {
    const handle = await open(file, 'r');
    try {
      // Refused before a byte is read when the size is known; the scanner also counts, for a file still growing.
      const size = (await handle.stat()).size;
      if (size > limits.maxFileBytes) {
        const message = `the file is ${size} bytes, over the ${limits.maxFileBytes}-byte limit for CSV (limit csvMaxFileBytes)`;
        return { severity: 'error', code: INPUT_TOO_LARGE, message, source: { file } };
      }
      for await (const chunk of fileChunks(handle)) if (await take(chunk)) break;
      await atEnd?.(handle);
    } finally {
      await handle.close();
    }
  } catch (err) {
    const message = `cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    return { severity: 'error', code: 'io.read', message, source: { file } };
  }
  return undefined;
}

/**
 * The file's bytes, CSV_CHUNK_BYTES at a time, from two read buffers taken in turn: the next
 * chunk is read (on libuv's thread pool) while the caller parses this one, rather than the parser
 * waiting idle for every read, which `npm run bench:check` shows. A chunk is valid until the
 * caller asks for the one after next; the CSV scanner and the hash keep nothing of it.
 */
async function* fileChunks(handle: FileHandle): AsyncGenerator<Buffer> {
  const buffers = [Buffer.allocUnsafe(CSV_CHUNK_BYTES), Buffer.allocUnsafe(CSV_CHUNK_BYTES)];
  let next: Promise<{ bytesRead: number }> | undefined = handle.read(buffers[0], 0, CSV_CHUNK_BYTES, null);
  try {
    for (let turn = 0; next !== undefined; turn ^= 1) {
      const { bytesRead } = await next;
      next = undefined;
      if (bytesRead === 0) return;
      // Reads stay in order: each starts when the one before it has ended, at the file's position.
      next = handle.read(buffers[turn ^ 1], 0, CSV_CHUNK_BYTES, null);
      yield buffers[turn].subarray(0, bytesRead);
    }
  } finally {
    // A read still under way (the caller stopped early) ends before the file is closed.
    if (next !== undefined) await next.catch(() => undefined);
  }
}
