/**
 * The one CSV grammar: csv-parse, with a fast path in front (fast-records.ts) that hands it the
 * rest of the input at the first record it does not handle. Every delimited-text input (`.csv`,
 * `.tsv`, `.txt`) is read through it, and so is result.csv's copy of its rows. This adds only
 * what csv-parse does not do:
 *
 * - Reading by content (sniff.ts), unless a mapping declares it: a byte-order mark decides the
 *   encoding; a file that is not text (a PDF or an image renamed) is refused as such; UTF-16
 *   without a mark is told by its NUL bytes; otherwise the text is UTF-8 until its first
 *   non-ASCII bytes, which decide between UTF-8 and Windows-1252 (the "ANSI" of a Western
 *   Excel). The separator (`,`, `;` or tab) is judged on the first records, or taken from an
 *   Excel `sep=;` first line; a mapping's declared separator wins, and its `sep=` line is read
 *   past all the same.
 * - Decoding: UTF-8 is decoded by whole characters and validated (a bad byte in a file read as
 *   UTF-8 is reported, not silently U+FFFD); UTF-16 and Windows-1252 go through iconv-lite
 *   (Node's TextDecoder mangles 0x80–0x9F in windows-1252).
 * - `skipRows` leading lines dropped before the grammar sees anything.
 * - Row numbers: 1-based physical lines of the original file, skipped and blank lines counted; a
 *   record spanning lines (quoted line breaks) has the number of the line it starts on. Counted
 *   here, one per record plus the line breaks inside its cells (CRLF once): csv-parse's
 *   `info.lines` counts CR and LF apart inside quoted CRLF values and drifts after one.
 * - Blank records skipped; the first other one is the header.
 * - Limits (csvMaxColumns, csvMaxRecordBytes, csvMaxFileBytes), each stopping with a located error.
 *
 * Records are delivered synchronously from `push` (csv-parse emits 'data' inside write() in
 * flowing mode): a caller needs no promise per record.
 */
import { isUtf8 } from 'node:buffer';
import { parse, type CsvError, type Parser } from 'csv-parse';
import type iconv from 'iconv-lite';
import { type CsvLimits, DEFAULT_CSV_LIMITS, INPUT_TOO_LARGE } from '../read-input.js';
import type { Mapping, MappingEncoding } from '../mapping/model.js';
import type { CsvRead } from '../model.js';
import { FastRecords } from './fast-records.js';
import { SEP_LINE_MAX, SNIFF_BYTES, SNIFF_CHARS, sepLine, sniffBytes, sniffDelimiter } from './sniff.js';
import { lateRequire } from '../../core/late-require.js';

/**
 * The physical reading rules of one CSV input: separator, text encoding, lines before the header.
 * What a mapping does not declare is read from the input itself (sniff.ts). The document reader
 * and the row re-reader (for result.csv) use the same dialect, so their row numbers agree.
 */
export interface CsvDialect {
  /** Undefined: `,`, `;` or tab, judged on the first records. */
  delimiter?: string;
  /** Declared encoding; undefined: told by the bytes. A byte-order mark in the file overrides either. */
  encoding?: MappingEncoding;
  /** Physical lines skipped before the header row. */
  skipRows: number;
}

export function dialectOf(mapping?: Mapping): CsvDialect {
  return {
    ...(mapping?.delimiter !== undefined ? { delimiter: mapping.delimiter } : {}),
    ...(mapping?.encoding !== undefined ? { encoding: mapping.encoding } : {}),
    skipRows: mapping?.skipRows ?? 0,
  };
}

/** The dialect an input was read in, as declared or told: what reads it again the same way. */
export function dialectRead(read: CsvRead, skipRows: number): CsvDialect {
  return { delimiter: read.delimiter, encoding: read.encoding, skipRows };
}

export interface CsvScanProblem {
  /**
   * `csv.limit`: a record over csvMaxColumns or csvMaxRecordBytes; `input.too-large`: over
   * csvMaxFileBytes; `csv.not-text`: not text at all (no row), a verdict on the file's content
   * like any other, with its reports.
   */
  code: 'csv.parse' | 'csv.encoding' | 'csv.limit' | 'csv.not-text' | typeof INPUT_TOO_LARGE;
  row?: number;
  message: string;
}

/** Takes an input's records, the header first (the document builder, an expression mapping's rows, result.csv). */
export interface CsvScanHandlers {
  /**
   * The first non-blank record after the skipped lines; `read`: the dialect it was read in (none
   * for a workbook's sheet, whose number cells are plain numbers).
   */
  header(cells: string[], row: number, read?: CsvRead): void;
  /**
   * Every later non-blank record; `cells` is owned by the callee. With `keepText`, `text` is the
   * record's own text (decoded, its line break left out) when it is strict CSV as it stands: split
   * by the fast path, every quote inside a quoted cell. Undefined otherwise.
   */
  record(cells: string[], row: number, text?: string): void;
}

export interface CsvScanOptions {
  /** The input's caps; those not given are DEFAULT_CSV_LIMITS'. */
  limits?: Partial<CsvLimits>;
  /** Hand each record's own text to `record` (result.csv copies it). */
  keepText?: boolean;
}

type Decoder = { write(buf: Buffer): string; end(): string | undefined };

/** iconv-lite, loaded at the first input that is not UTF-8: most inputs never need it. */
function iconvPackage(): typeof iconv {
  return lateRequire<typeof iconv>('iconv-lite');
}

const ENCODING_MESSAGE =
  'the file is not valid UTF-8 here; if it was saved as Windows-1252 ("ANSI") or UTF-16 without a byte-order mark, ' +
  'pass --mapping with an "encoding" (see docs: ERP mapping)';
/** Text read as UTF-8 (its first non-ASCII bytes were) that stops being UTF-8 further on. */
const MIXED_MESSAGE =
  'the file is not valid UTF-8 here, though it reads as UTF-8 up to this row: it mixes two encodings. ' +
  'Save it again as UTF-8, or pass --mapping with an "encoding" (see docs: ERP mapping)';

/** How the text is decoded; `auto`: UTF-8 until the first non-ASCII bytes say UTF-8 or Windows-1252. */
type Decoding = 'auto' | 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

export class CsvScanner {
  /** Set when the file cannot be read further (syntax, a limit) or is not in its encoding. */
  readonly problems: CsvScanProblem[] = [];
  readonly limits: CsvLimits;
  private readonly keepText: boolean;
  /** Physical row number the next record starts on. */
  private nextStart: number;
  private sawHeader = false;
  private failed = false;
  /** Lines still to drop before the grammar sees anything. */
  private linesToSkip: number;
  /** The last line skipped ended a chunk at a CR: an LF starting the next one is its line break's. */
  private skippedAtCr = false;
  /** The fast path, until it hands over (none for a delimiter longer than one character). */
  private fast: FastRecords | undefined;
  /** Fast path: decoded text not yet delivered, starting at a record boundary. */
  private pending = '';
  /** `pending` is ASCII only, so its length in bytes is its length. */
  private pendingAscii = true;
  /** csv-parse, once the fast path handed over (or from the start). */
  private parser: Parser | undefined;
  /** Bytes handed to csv-parse, and where its last record ended (csvMaxRecordBytes). */
  private parsedBytes = 0;
  private lastRecordEnd = 0;
  /**
   * The first bytes, held until they can say what the file is (sniff.ts): copies of the chunks,
   * joined once, so that many small chunks (a pipe's, a bucket's stream) are not copied again at
   * each one.
   */
  private head: Buffer[] | undefined = [];
  private headBytes = 0;
  /** How the text is decoded, once the first bytes are told. */
  private decoding: Decoding = 'auto';
  /** iconv-lite's decoder; undefined for UTF-8. */
  private decoder: Decoder | undefined;
  /** UTF-8: the first bytes of a character the next chunk completes. */
  private utf8Carry: Buffer | undefined;
  private utf8Reported = false;
  private fileBytes = 0;
  /** The separator, once declared or told. */
  private delimiter: string | undefined;
  /** Text held until the separator is told from it, and whether it is all ASCII. */
  private sniffText = '';
  private sniffAscii = true;

  constructor(
    private readonly dialect: CsvDialect,
    private readonly handlers: CsvScanHandlers,
    opts: CsvScanOptions = {},
  ) {
    this.limits = { ...DEFAULT_CSV_LIMITS, ...opts.limits };
    this.keepText = opts.keepText === true;
    this.nextStart = dialect.skipRows + 1;
    this.linesToSkip = dialect.skipRows;
  }

  /** True once the file cannot be read further (syntax or a limit): callers stop reading. */
  get stopped(): boolean {
    return this.failed;
  }

  /** The separator and encoding the input is read in, declared or told (`,` and UTF-8 until known). */
  get read(): CsvRead {
    const encoding = this.decoding === 'auto' ? 'utf-8' : this.decoding;
    return { delimiter: this.delimiter ?? this.dialect.delimiter ?? ',', encoding };
  }

  /**
   * Feeds the next chunk of raw file bytes. Nothing of `chunk` is kept after it returns (what is
   * held on to is copied), so the caller may read the next chunk into the same buffer: one
   * reused read buffer rather than a fresh one per read, which peak RSS in `npm run bench:check` shows.
   */
  push(chunk: Buffer): void {
    if (this.failed) return;
    this.fileBytes += chunk.length;
    if (this.fileBytes > this.limits.maxFileBytes) {
      const { maxFileBytes } = this.limits;
      const message = `the file is over the ${maxFileBytes}-byte limit for CSV (limit csvMaxFileBytes)`;
      this.stop(INPUT_TOO_LARGE, message);
      return;
    }
    if (this.head !== undefined) {
      // The first read chunk decides: held back only when the first read is shorter.
      if (this.headBytes + chunk.length < SNIFF_BYTES) {
        this.head.push(Buffer.from(chunk));
        this.headBytes += chunk.length;
        return;
      }
      chunk = this.sniff(Buffer.concat([...this.head, chunk]));
      this.head = undefined;
    }
    this.decode(chunk, false);
  }

  /** Ends the input; every record has been delivered when the promise settles (it never rejects). */
  async finish(): Promise<void> {
    if (this.head !== undefined) {
      const rest = this.sniff(Buffer.concat(this.head));
      this.head = undefined;
      this.decode(rest, false);
    }
    this.decode(Buffer.alloc(0), true);
    if (this.delimiter === undefined && !this.failed) this.tellDelimiter(true);
    if (this.fast !== undefined && !this.failed) this.splitText('', true, true);
    const parser = this.parser;
    if (this.failed || parser === undefined || parser.destroyed) return;
    // Stream errors are emitted on a later tick, so wait for the parser to settle either way.
    await new Promise<void>((resolve) => {
      parser.once('end', resolve);
      parser.once('error', () => resolve());
      parser.once('close', resolve);
      parser.end();
    });
  }

  /**
   * Tells from the first bytes whether the input is text and how it is encoded (a byte-order
   * mark, else the dialect's, else its bytes); returns the bytes after the mark.
   */
  private sniff(buf: Buffer): Buffer {
    const declared = this.dialect.encoding;
    const verdict = sniffBytes(buf, declared);
    if (!verdict.text) {
      this.stop('csv.not-text', verdict.message, false);
      return Buffer.alloc(0);
    }
    const decoding: Decoding =
      verdict.encoding ?? (declared === 'utf-16' ? 'utf-16le' : declared === undefined ? 'auto' : declared);
    this.decoding = decoding;
    if (decoding !== 'utf-8' && decoding !== 'auto')
      this.decoder = iconvPackage().getDecoder(decoding, { stripBOM: false }) as Decoder;
    return buf.subarray(verdict.bom);
  }

  /** Bytes → text, whole characters only; `end`: the input ends after `chunk`. */
  private decode(chunk: Buffer, end: boolean): void {
    if (this.failed) return;
    if (this.decoder !== undefined) {
      // iconv-lite's decoders may hold on to bytes of a chunk between writes: they get a copy.
      const text = this.decoder.write(Buffer.from(chunk)) + (end ? (this.decoder.end() ?? '') : '');
      this.feed(text, false);
      return;
    }
    let buf = this.utf8Carry === undefined ? chunk : Buffer.concat([this.utf8Carry, chunk]);
    this.utf8Carry = undefined;
    const tail = end ? 0 : incompleteUtf8Tail(buf);
    if (tail > 0) {
      this.utf8Carry = Buffer.from(buf.subarray(buf.length - tail));
      buf = buf.subarray(0, buf.length - tail);
    }
    // Validated as bytes: a bad sequence would otherwise silently become U+FFFD.
    const valid = isUtf8(buf);
    if (!valid && this.decoding === 'auto' && !utf8Before(buf)) {
      // Everything before was ASCII, which Windows-1252 reads alike: the rest is read as it.
      this.decoding = 'windows-1252';
      this.decoder = iconvPackage().getDecoder('windows-1252') as Decoder;
      const carried = this.utf8Carry;
      this.utf8Carry = undefined;
      this.decode(carried === undefined ? buf : Buffer.concat([buf, carried]), end);
      return;
    }
    const text = buf.toString('utf8');
    if (!valid && !this.utf8Reported) this.reportUtf8(text);
    // One character per byte of valid UTF-8 is ASCII; the first other characters settle it as UTF-8.
    const ascii = text.length === buf.length && !this.utf8Reported;
    if (!ascii && this.decoding === 'auto') this.decoding = 'utf-8';
    this.feed(text, ascii);
  }

  /** Decoded text: the skipped lines dropped, the rest to the fast path or csv-parse. */
  private feed(text: string, ascii: boolean): void {
    if (this.linesToSkip > 0 || this.skippedAtCr) text = this.skipLines(text);
    if (text.length === 0 || this.failed) return;
    if (this.delimiter === undefined) {
      // Held until there is enough to tell the separator from, or to see a `sep=` line.
      this.sniffText += text;
      this.sniffAscii &&= ascii;
      if (!this.enoughToTell()) return;
      this.tellDelimiter(false);
      return;
    }
    this.grammar(text, ascii);
  }

  /** Enough text held: the first records to judge the separator by; declared, the whole of a `sep=` line if it is one. */
  private enoughToTell(): boolean {
    const held = this.sniffText;
    if (this.dialect.delimiter === undefined) return held.length >= SNIFF_CHARS;
    return held.length >= SEP_LINE_MAX || held.includes('\n');
  }

  /**
   * `text` without the lines still to skip at its front. A line ends at LF, CR or CRLF, as the
   * grammar and the row numbers count them (a Mac "CSV (Macintosh)" file ends lines with CR).
   */
  private skipLines(text: string): string {
    let at = 0;
    if (this.skippedAtCr) {
      this.skippedAtCr = false;
      if (text.charCodeAt(0) === 0x0a) at = 1;
    }
    while (this.linesToSkip > 0) {
      const end = lineBreakAt(text, at);
      if (end < 0) return ''; // all of it is inside skipped lines
      at = end + 1;
      if (text.charCodeAt(end) === 0x0d) {
        if (at === text.length) this.skippedAtCr = true;
        else if (text.charCodeAt(at) === 0x0a) at++;
      }
      this.linesToSkip--;
    }
    return at === 0 ? text : text.slice(at);
  }

  private grammar(text: string, ascii: boolean): void {
    if (this.fast !== undefined) this.splitText(text, false, ascii);
    else this.write(text);
  }

  /**
   * The separator from the text held (declared, else an Excel `sep=` line, else its records); the
   * text goes on to the grammar. A `sep=` line is read past even when the separator is declared:
   * it is no record in either case.
   */
  private tellDelimiter(final: boolean): void {
    let text = this.sniffText;
    this.sniffText = '';
    const sep = sepLine(text);
    if (sep !== undefined) {
      text = text.slice(sep.length);
      this.nextStart++;
    }
    this.startGrammar(this.dialect.delimiter ?? sep?.delimiter ?? sniffDelimiter(text, final));
    if (text.length > 0) this.grammar(text, this.sniffAscii);
  }

  private startGrammar(delimiter: string): void {
    this.delimiter = delimiter;
    if (delimiter.length === 1) this.fast = new FastRecords(delimiter.charCodeAt(0), this.keepText);
    else this.startParser();
  }

  /** Fast path: delivers the whole records of pending + chunk; hands over to csv-parse where it must. */
  private splitText(chunk: string, final: boolean, chunkAscii: boolean): void {
    const text = this.pending === '' ? chunk : this.pending + chunk;
    // Record sizes are in bytes (csvMaxRecordBytes); known without measuring when all is ASCII.
    const ascii = (chunkAscii && (this.pending === '' || this.pendingAscii)) || Buffer.byteLength(text) === text.length;
    const bytesOf = (from: number, to: number) => (ascii ? to - from : Buffer.byteLength(text.slice(from, to)));
    this.pending = '';
    let previous = 0;
    const split = (this.fast as FastRecords).split(
      text,
      final,
      (cells, lineEnd, end, mayBreak, strict) => {
        const start = previous;
        previous = end;
        const own = strict ? text.slice(start, lineEnd) : undefined;
        this.onRecord(cells, bytesOf(start, end), mayBreak, own);
      },
      () => this.failed,
    );
    if (this.failed) return;
    const rest = split.at === 0 ? text : text.slice(split.at);
    if (split.fallback) {
      // From this record on csv-parse reads everything: its state at a record boundary is its first.
      this.fast = undefined;
      this.startParser();
      this.write(rest);
      return;
    }
    this.pending = rest;
    this.pendingAscii = ascii;
    // A record still open after this chunk: stopped here, one chunk past the cap.
    if (bytesOf(split.at, text.length) > this.limits.maxRecordBytes) this.recordTooLarge();
  }

  private startParser(): void {
    const parser = parse({
      delimiter: this.delimiter,
      // Price codes contain bare double quotes (`DTF Full Color 10" x 10"`): text, not a syntax error.
      relax_quotes: true,
      // Row-length mismatches are reported by the reader, at the row, with both counts.
      relax_column_count: true,
      // Blank lines are kept here and dropped in onRecord, so every physical line is counted.
      skip_empty_lines: false,
      // Every line end ends a record: csv-parse otherwise learns ONE from the first line, and a
      // file mixing CRLF and LF lines reads as one long record. CRLF first, so it is one, not two.
      record_delimiter: ['\r\n', '\n', '\r'],
    });
    // 'data' in flowing mode comes synchronously inside write().
    parser.on('data', (cells: string[]) => {
      const end = parser.info.bytes;
      const bytes = end - this.lastRecordEnd;
      this.lastRecordEnd = end;
      this.onRecord(cells, bytes, true, undefined);
    });
    parser.on('error', (err: CsvError) => {
      // csv-parse's "at line N" drifts after quoted CRLF values; the record's own start row is what helps.
      const message = err.message.replace(/\s*at line \d+/, '').replace(/\s*\(line \d+\)/, '');
      this.stop('csv.parse', `cannot parse the record starting on this row: ${message}`);
    });
    this.parser = parser;
  }

  private write(text: string): void {
    const parser = this.parser as Parser;
    const bytes = Buffer.from(text, 'utf8');
    parser.write(bytes);
    this.parsedBytes += bytes.length;
    // A record still open: csv-parse holds its cells until it ends, so an endless record (or a
    // line of a million delimiters) is stopped here, one chunk past the cap.
    if (!this.failed && this.parsedBytes - this.lastRecordEnd > this.limits.maxRecordBytes) this.recordTooLarge();
  }

  /** One record of `bytes` bytes (its line break included); `mayBreak` false: no cell holds a line break. */
  private onRecord(cells: string[], bytes: number, mayBreak: boolean, text: string | undefined): void {
    if (this.failed) return;
    if (bytes > this.limits.maxRecordBytes) {
      this.recordTooLarge();
      return;
    }
    if (cells.length > this.limits.maxColumns) {
      const limit = `${this.limits.maxColumns} (limit csvMaxColumns)`;
      this.stop('csv.limit', `this row has ${cells.length} columns, over the limit of ${limit}`);
      return;
    }
    const row = this.nextStart;
    this.nextStart = row + 1 + (mayBreak ? countLineBreaks(cells) : 0);
    if (isBlank(cells)) return;
    if (this.sawHeader) this.handlers.record(cells, row, text);
    else {
      this.sawHeader = true;
      this.handlers.header(cells, row, this.read);
    }
  }

  private recordTooLarge(): void {
    const limit = `${this.limits.maxRecordBytes}-byte limit (limit csvMaxRecordBytes)`;
    this.stop('csv.limit', `the record starting on this row is over the ${limit}`);
  }

  /**
   * Ends reading, at the row the next record starts on (`atRow` false: a problem of the whole
   * file): the parser is dropped, nothing more is delivered.
   */
  private stop(code: CsvScanProblem['code'], message: string, atRow = true): void {
    if (this.failed) return;
    this.failed = true;
    this.problems.push(atRow ? { code, row: this.nextStart, message } : { code, message });
    this.parser?.destroy();
  }

  /** Reported once, at about the row of the first bad byte (lines counted from the current record). */
  private reportUtf8(text: string): void {
    this.utf8Reported = true;
    let row = this.nextStart;
    const bad = text.indexOf('\uFFFD');
    for (let i = text.indexOf('\n'); i >= 0 && i < bad; i = text.indexOf('\n', i + 1)) row++;
    const message = this.dialect.encoding === undefined ? MIXED_MESSAGE : ENCODING_MESSAGE;
    this.problems.push({ code: 'csv.encoding', row, message });
  }
}

/** The first CR or LF of `text` from `from`; -1 when there is none. */
function lineBreakAt(text: string, from: number): number {
  const lf = text.indexOf('\n', from);
  const cr = text.indexOf('\r', from);
  return cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
}

function isBlank(cells: string[]): boolean {
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i];
    if (c.length !== 0 && c.trim().length !== 0) return false;
  }
  return true;
}

/** Line breaks inside a record's cells; CRLF counts once, as in any editor. */
export function countLineBreaks(cells: string[]): number {
  let n = 0;
  for (const c of cells) {
    if (c.indexOf('\n') < 0 && c.indexOf('\r') < 0) continue;
    for (let i = 0; i < c.length; i++) {
      const ch = c.charCodeAt(i);
      if (ch === 10) n++;
      else if (ch === 13) {
        n++;
        if (c.charCodeAt(i + 1) === 10) i++;
      }
    }
  }
  return n;
}

/**
 * Whether text that is not all UTF-8 has UTF-8 characters beyond ASCII before its first bad
 * byte: two encodings mixed (exports pasted together), not a Windows-1252 file.
 */
function utf8Before(buf: Buffer): boolean {
  const text = buf.toString('utf8');
  const bad = text.indexOf('\uFFFD');
  for (let i = 0; i < bad; i++) if (text.charCodeAt(i) > 0x7f) return true;
  return false;
}

/** Bytes at the end of `buf` that start a multi-byte character completed by the next chunk. */
function incompleteUtf8Tail(buf: Buffer): number {
  for (let i = 1; i <= 3 && i <= buf.length; i++) {
    const b = buf[buf.length - i];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    if (b < 0xc0) return 0;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    return need > i ? i : 0;
  }
  return 0;
}
