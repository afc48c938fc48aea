import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { Diagnostic, ManifestFormat, RawDocument } from './model.js';

/** Limits every reader applies, so one hostile file cannot exhaust memory or time. */
export interface ReadLimits {
  /** Largest input accepted, in bytes (setting manifestMaxBytes). Default 10 MB (YAML/JSON; CSV streams and sets its own). */
  maxBytes?: number;
  /** CSV inputs: caps applied while streaming (defaults DEFAULT_CSV_LIMITS). */
  csv?: Partial<CsvLimits>;
}

export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Caps on a CSV input, checked while it streams, so a hostile file (100,000 columns, one
 * endless record, a file that keeps growing) stops with a located error instead of eating
 * memory and time. Each is named in its error message and in docs/security.md (csvMaxColumns …);
 * the settings of the same names set them for the CLI (csvLimitsFrom, core/config/resolve-settings.ts); library callers pass `LoadOptions.csv`.
 */
export interface CsvLimits {
  /** Cells in one record (the header or any row). */
  maxColumns: number;
  /** Bytes of one record as UTF-8, delimiters and quotes included. */
  maxRecordBytes: number;
  /** Bytes of the whole file. */
  maxFileBytes: number;
}

/** Generous for real exports (ERP exports run to a few hundred columns); see docs/security.md. */
export const DEFAULT_CSV_LIMITS: CsvLimits = {
  maxColumns: 1000,
  maxRecordBytes: 1024 * 1024,
  maxFileBytes: 1024 * 1024 * 1024,
};

/** Codes for problems with the input itself (not its content); `check` treats them as usage errors. */
export const INPUT_NOT_FOUND = 'input.not-found';
export const INPUT_UNREADABLE = 'input.unreadable';
export const INPUT_TOO_LARGE = 'input.too-large';
export const INPUT_ENCODING = 'input.encoding';
export const INPUT_UNSUPPORTED = 'input.unsupported-format';
/** An input whose bytes, read again (result.csv), are no longer those first read (scanCsvFile). */
export const INPUT_CHANGED = 'input.changed';
/** A shop export htorder will not read without being told which mapping: ambiguous, near, or the wrong one. */
export const INPUT_MAPPING_CHOICE = 'input.mapping-choice';

export type InputRead = { bytes: Uint8Array; diagnostic?: undefined } | { bytes?: undefined; diagnostic: Diagnostic };

/**
 * Why `file` cannot be read as an input at all, before any reader opens it: missing, or not a
 * regular file (a folder, a FIFO, a device), in the words readInputBytes uses; undefined for a
 * regular file. The CSV and .xlsx readers open the file several times (sniffing, reading,
 * result.csv), and each open of a FIFO would wait for a writer for ever, and a folder would fail
 * only midway.
 */
export async function unreadableInput(file: string): Promise<Diagnostic | undefined> {
  return (await openInput(file, async () => ({ bytes: new Uint8Array(0) }))).diagnostic;
}

/**
 * Reads a whole input file, refusing missing files, anything that is not a regular file and files
 * over the size cap. Checked and read through one open handle, and never more than one byte past
 * the cap: a file swapped or grown after the check is still read within bounds, and the reader's
 * own size check refuses it.
 */
export async function readInputBytes(file: string, limits: ReadLimits = {}): Promise<InputRead> {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  return openInput(file, async (handle, size) => {
    if (size > maxBytes) return { diagnostic: inputDiagnostic(file, INPUT_TOO_LARGE, tooLargeMessage(size, maxBytes)) };
    const chunks: Buffer[] = [];
    for await (const chunk of handle.createReadStream({ autoClose: false, start: 0, end: maxBytes }))
      chunks.push(chunk);
    return { bytes: Buffer.concat(chunks) };
  });
}

/**
 * `act` on the open handle of `file` and its size when it is a regular file, else the diagnostic of
 * a missing file or of anything else. Opened non-blocking, so a FIFO put there cannot hang the open.
 */
async function openInput(
  file: string,
  act: (handle: FileHandle, size: number) => Promise<InputRead>,
): Promise<InputRead> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const info = await handle.stat();
    if (!info.isFile()) return { diagnostic: inputDiagnostic(file, INPUT_UNREADABLE, 'is not a regular file') };
    return await act(handle, info.size);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return { diagnostic: inputDiagnostic(file, INPUT_NOT_FOUND, 'no such file') };
    return { diagnostic: inputDiagnostic(file, INPUT_UNREADABLE, `cannot be read (${code ?? 'error'})`) };
  } finally {
    await handle?.close();
  }
}

function inputDiagnostic(file: string, code: string, message: string): Diagnostic {
  return { severity: 'error', code, message, source: { file } };
}

/** What a reader returns for an input it could not read (or parse) at all: every location is the file's. */
export function unreadDocument(file: string, format: ManifestFormat, diagnostic: Diagnostic, sha256 = ''): RawDocument {
  return { file, format, sha256, sources: { locate: () => ({ file }) }, diagnostics: [diagnostic] };
}

export function tooLargeMessage(size: number, maxBytes: number): string {
  return `the file is ${size} bytes, over the ${maxBytes}-byte limit for a YAML or JSON manifest (limit manifestMaxBytes, HTORDER_MANIFEST_MAX_BYTES)`;
}

/** Decodes UTF-8 (a BOM is dropped); undefined when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
