/**
 * Turns the bytes of one CSV file into records with their PHYSICAL row numbers, streaming.
 *
 * Steps, per chunk: byte-order-mark sniffing → decoding (UTF-8 is parsed as bytes and only
 * validated; UTF-16 and Windows-1252 go through iconv-lite, because Node's TextDecoder
 * mangles 0x80–0x9F in windows-1252) → dropping `skipRows` leading lines → csv-parse.
 *
 * Row numbers: 1-based physical line numbers in the ORIGINAL file, counting skipped lines
 * and blank lines; a record spanning several lines (quoted newlines) has the number of the
 * line it starts on. Lines are counted here (one per record plus the line breaks inside its
 * cells, CRLF counting once) rather than taken from csv-parse's `info.lines`, which counts CR
 * and LF separately inside quoted CRLF values and so drifts after the first such cell.
 *
 * Records are delivered synchronously from `push` (csv-parse emits 'data' inside write() in
 * flowing mode), so callers need no async iteration per record: a million rows would
 * otherwise cost a million promise round trips.
 *
 * Splitting: with a one-character delimiter, records are split by fast-records.ts, which slices
 * cells out of the decoded text; at the first record it does not handle (text after a closing
 * quote, a quote never closed) the rest of the input, from that record on, goes to csv-parse —
 * so what comes out, errors included, is what csv-parse alone would give.
 */
import { isUtf8 } from 'node:buffer';
import { parse, type CsvError, type Parser } from 'csv-parse';
import { splitRecords } from './fast-records.js';
import iconv from 'iconv-lite';
import { CSV_LIMIT_SETTINGS, type CsvLimits, DEFAULT_CSV_LIMITS, INPUT_TOO_LARGE } from '../read-input.js';
import type { CsvDialect } from './dialect.js';

export interface CsvScanProblem {
  /** `csv.limit`: a record over csvMaxColumns or csvMaxRecordBytes; `input.too-large`: over csvMaxFileBytes. */
  code: 'csv.parse' | 'csv.encoding' | 'csv.limit' | typeof INPUT_TOO_LARGE;
  row: number;
  message: string;
}

export interface CsvScanHandlers {
  /** The first non-blank record after the skipped lines. */
  header(cells: string[], row: number): void;
  /** Every later non-blank record. `cells` is owned by the callee. */
  record(cells: string[], row: number): void;
}

type Decoder = { write(buf: Buffer): string; end(): string | undefined };

export class CsvScanner {
  /** Set when the file cannot be read further (syntax) or is not in its encoding. */
  readonly problems: CsvScanProblem[] = [];
  /** Physical row number the next record starts on. */
  private nextStart: number;
  private sawHeader = false;
  private failed = false;
  /** csv-parse, once the fast splitter handed over (or from the start, for a longer delimiter). */
  private parser: Parser | undefined;
  /** Records are split by fast-records.ts until it meets a record it does not handle. */
  private fast: boolean;
  private readonly delimiterCode: number;
  /** Fast path: decoded text not yet delivered, starting at a record boundary. */
  private pending = '';
  /** `pending` is ASCII only (it is the end of a text that was). */
  private pendingAscii = true;
  private sniffed = false;
  private sniffBuffer: Buffer | undefined;
  private decoder: Decoder | undefined;
  /** Lines still to drop before csv-parse sees anything. */
  private linesToSkip: number;
  /**
   * UTF-8: the first bytes of a character split across chunks, put before the next chunk, so
   * validation, the fast splitter and csv-parse all see whole characters.
   */
  private utf8Carry: Buffer | undefined;
  private utf8Reported = false;
  /** Raw file bytes pushed so far (csvMaxFileBytes). */
  private fileBytes = 0;
  /** Bytes handed to csv-parse so far, and where its last record ended (csvMaxRecordBytes). */
  private parsedBytes = 0;
  private lastRecordEnd = 0;

  constructor(
    private readonly dialect: CsvDialect,
    private readonly handlers: CsvScanHandlers,
    private readonly limits: CsvLimits = DEFAULT_CSV_LIMITS,
  ) {
    this.nextStart = dialect.skipRows + 1;
    this.linesToSkip = dialect.skipRows;
    this.fast = dialect.delimiter.length === 1;
    this.delimiterCode = dialect.delimiter.charCodeAt(0);
    if (!this.fast) this.startParser();
  }

  private startParser(): Parser {
    this.fast = false;
    this.parsedBytes = 0;
    this.lastRecordEnd = 0;
    const parser = parse({
      delimiter: this.dialect.delimiter,
      // Price codes contain bare double quotes (`DTF Full Color 10" x 10"`): a quote inside
      // an unquoted field is text, not a syntax error.
      relax_quotes: true,
      // Row-length mismatches are reported by the reader, at the row, with both counts.
      relax_column_count: true,
      // Blank lines are kept here and dropped below, so every physical line is accounted for.
      skip_empty_lines: false,
      // Every line end ends a record, whatever the first line used: csv-parse otherwise learns
      // ONE delimiter from the first line, and a file mixing CRLF and LF lines (concatenated
      // exports) read as one long record. CRLF first, so it is one delimiter, not two; this
      // matches countLineBreaks (CRLF, LF and a lone CR are each one physical line).
      record_delimiter: ['\r\n', '\n', '\r'],
    });
    // 'data' in flowing mode is delivered synchronously inside write(); csv-parse's on_record
    // hook would give line info but builds two info objects per record (measurably slower).
    parser.on('data', (cells: string[]) => {
      const end = parser.info.bytes;
      const bytes = end - this.lastRecordEnd;
      this.lastRecordEnd = end;
      this.onRecord(cells, bytes);
    });
    parser.on('error', (err: CsvError) => this.fail(err));
    this.parser = parser;
    return parser;
  }

  /** True once the file cannot be read further (syntax or a limit): callers stop reading. */
  get stopped(): boolean {
    return this.failed;
  }

  /**
   * Feeds the next chunk of raw file bytes. The scanner keeps nothing of `chunk` after it
   * returns (what it holds on to is copied), so the caller may read the next chunk into the
   * same buffer: one reused read buffer instead of a fresh 64 KiB one per read, which the
   * process otherwise kept as resident memory long after parsing (~45 MB for a 66 MB file).
   */
  push(chunk: Buffer): void {
    if (this.failed) return;
    this.fileBytes += chunk.length;
    if (this.fileBytes > this.limits.maxFileBytes) {
      this.stop(
        INPUT_TOO_LARGE,
        this.nextStart,
        `the file is over the ${this.limits.maxFileBytes}-byte limit for CSV (limit ${CSV_LIMIT_SETTINGS.maxFileBytes})`,
      );
      return;
    }
    if (!this.sniffed) {
      // A BOM needs up to 3 bytes; a first chunk shorter than that is held back once.
      this.sniffBuffer = this.sniffBuffer === undefined ? Buffer.from(chunk) : Buffer.concat([this.sniffBuffer, chunk]);
      if (this.sniffBuffer.length < 3) return;
      chunk = this.sniff(this.sniffBuffer);
      this.sniffBuffer = undefined;
    }
    // iconv-lite's decoders may hold on to bytes of a chunk between writes: they get their own copy.
    if (this.decoder !== undefined) this.feedText(this.decoder.write(Buffer.from(chunk)));
    else this.pushUtf8(chunk);
  }

  private pushUtf8(chunk: Buffer): void {
    let buf = this.utf8Carry === undefined ? chunk : Buffer.concat([this.utf8Carry, chunk]);
    this.utf8Carry = undefined;
    const tail = incompleteUtf8Tail(buf);
    if (tail > 0) {
      this.utf8Carry = Buffer.from(buf.subarray(buf.length - tail));
      buf = buf.subarray(0, buf.length - tail);
    }
    // Parsed as bytes: invalid sequences would otherwise silently become U+FFFD.
    if (!this.utf8Reported && !isUtf8(buf)) this.reportUtf8(buf);
    this.feedBytes(buf);
  }

  /** Ends the input; every record has been delivered when the promise settles (it never rejects). */
  async finish(): Promise<void> {
    if (!this.sniffed && this.sniffBuffer !== undefined) {
      const rest = this.sniff(this.sniffBuffer);
      this.sniffBuffer = undefined;
      if (this.decoder === undefined) this.pushUtf8(rest);
      else this.feedText(this.decoder.write(rest));
    }
    if (this.decoder !== undefined) {
      const tail = this.decoder.end();
      if (tail) this.feedText(tail);
    } else if (this.utf8Carry !== undefined) {
      // The file ends inside a multi-byte character: reported, and its bytes read as they are.
      const rest = this.utf8Carry;
      this.utf8Carry = undefined;
      this.reportUtf8();
      this.feedBytes(rest);
    }
    if (this.fast && !this.failed) this.splitText('', true);
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

  private sniff(buf: Buffer): Buffer {
    this.sniffed = true;
    let encoding: string = this.dialect.encoding;
    let start = 0;
    if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
      encoding = 'utf-8';
      start = 3;
    } else if (buf[0] === 0xff && buf[1] === 0xfe) {
      encoding = 'utf-16le';
      start = 2;
    } else if (buf[0] === 0xfe && buf[1] === 0xff) {
      encoding = 'utf-16be';
      start = 2;
    } else if (encoding === 'utf-16') {
      encoding = 'utf-16le';
    }
    if (encoding !== 'utf-8') this.decoder = iconv.getDecoder(encoding, { stripBOM: false }) as Decoder;
    return buf.subarray(start);
  }

  private feedBytes(buf: Buffer): void {
    if (this.linesToSkip > 0) {
      let at = 0;
      while (this.linesToSkip > 0) {
        const nl = buf.indexOf(0x0a, at);
        if (nl < 0) return; // the whole chunk is inside skipped lines
        at = nl + 1;
        this.linesToSkip--;
      }
      buf = buf.subarray(at);
    }
    if (buf.length === 0) return;
    // Whole characters only (pushUtf8), so the text decodes without a broken one at the end.
    if (this.fast) {
      const text = buf.toString('utf8');
      // One character per byte of valid UTF-8 is ASCII: known here without measuring the text again.
      this.splitText(text, false, text.length === buf.length && !this.utf8Reported);
    }
    // csv-parse keeps the unfinished end of a chunk as a view of it: it gets its own copy.
    else this.write(Buffer.from(buf));
  }

  /** Fast path: delivers the whole records of pending + chunk; hands over to csv-parse where it must. */
  private splitText(chunk: string, final: boolean, chunkAscii = false): void {
    const text = this.pending === '' ? chunk : this.pending + chunk;
    // Record sizes are in bytes (csvMaxRecordBytes): text of ASCII only has one byte per character.
    // Measuring that (Buffer.byteLength) walked every character of the file once more.
    const ascii = (chunkAscii && (this.pending === '' || this.pendingAscii)) || Buffer.byteLength(text) === text.length;
    this.pending = '';
    let previous = 0;
    const split = splitRecords(
      text,
      0,
      this.delimiterCode,
      final,
      (cells, end, mayBreak) => {
        const bytes = ascii ? end - previous : Buffer.byteLength(text.slice(previous, end));
        previous = end;
        this.onRecord(cells, bytes, mayBreak);
      },
      () => this.failed,
    );
    if (this.failed) return;
    const rest = split.at === 0 ? text : text.slice(split.at);
    if (split.fallback) {
      // From this record on, csv-parse reads everything: its state at a record boundary is its first.
      this.startParser();
      this.write(Buffer.from(rest, 'utf8'));
      return;
    }
    this.pending = rest;
    this.pendingAscii = ascii;
    // A record still open after this chunk: stopped here, one chunk past the cap (as below).
    const open = ascii ? rest.length : Buffer.byteLength(rest);
    if (open > this.limits.maxRecordBytes) this.recordTooLarge();
  }

  private feedText(text: string): void {
    if (this.linesToSkip > 0) {
      let at = 0;
      while (this.linesToSkip > 0) {
        const nl = text.indexOf('\n', at);
        if (nl < 0) return;
        at = nl + 1;
        this.linesToSkip--;
      }
      text = text.slice(at);
    }
    if (text.length === 0) return;
    if (this.fast) this.splitText(text, false);
    // csv-parse works on bytes internally; it converts strings with Buffer.from.
    else this.write(Buffer.from(text, 'utf8'));
  }

  private write(buf: Buffer): void {
    if (this.failed || this.parser === undefined) return;
    this.parser.write(buf);
    this.parsedBytes += buf.length;
    // A record still open after this chunk: csv-parse holds its cells until it ends, so an
    // endless record (or a line of a million delimiters) is stopped here, one chunk past the cap.
    if (!this.failed && this.parsedBytes - this.lastRecordEnd > this.limits.maxRecordBytes) this.recordTooLarge();
  }

  private recordTooLarge(): void {
    this.stop(
      'csv.limit',
      this.nextStart,
      `the record starting on this row is over the ${this.limits.maxRecordBytes}-byte limit ` +
        `(limit ${CSV_LIMIT_SETTINGS.maxRecordBytes})`,
    );
  }

  /** Ends reading at a limit: the parser is dropped, nothing more is delivered. */
  private stop(code: CsvScanProblem['code'], row: number, message: string): void {
    if (this.failed) return;
    this.failed = true;
    this.problems.push({ code, row, message });
    this.parser?.destroy();
  }

  /**
   * One record of `bytes` bytes (its line break included). `mayBreak` false: no cell can hold a
   * line break (the fast splitter saw none inside a quoted cell), so its cells need not be searched for one.
   */
  private onRecord(cells: string[], bytes: number, mayBreak = true): void {
    if (this.failed) return;
    if (bytes > this.limits.maxRecordBytes) {
      this.recordTooLarge();
      return;
    }
    if (cells.length > this.limits.maxColumns) {
      this.stop(
        'csv.limit',
        this.nextStart,
        `this row has ${cells.length} columns, over the limit of ${this.limits.maxColumns} ` +
          `(limit ${CSV_LIMIT_SETTINGS.maxColumns})`,
      );
      return;
    }
    const row = this.nextStart;
    this.nextStart = row + 1 + (mayBreak ? countLineBreaks(cells) : 0);
    if (isBlank(cells)) return;
    if (this.sawHeader) this.handlers.record(cells, row);
    else {
      this.sawHeader = true;
      this.handlers.header(cells, row);
    }
  }

  private fail(err: CsvError): void {
    if (this.failed) return;
    this.failed = true;
    // csv-parse's "at line N" drifts after quoted CRLF values; the record's own start row
    // (where an unclosed quote opened) is what the user needs.
    const message = err.message.replace(/\s*at line \d+/, '').replace(/\s*\(line \d+\)/, '');
    this.problems.push({
      code: 'csv.parse',
      row: this.nextStart,
      message: `cannot parse the record starting on this row: ${message}`,
    });
  }

  private reportUtf8(buf?: Buffer): void {
    if (this.utf8Reported) return;
    this.utf8Reported = true;
    let row = this.nextStart;
    if (buf !== undefined) {
      // Approximate: lines before the first bad byte in this chunk, from the current record.
      const bad = firstInvalidUtf8(buf);
      for (let i = buf.indexOf(0x0a); i >= 0 && i < bad; i = buf.indexOf(0x0a, i + 1)) row++;
    }
    this.problems.push({
      code: 'csv.encoding',
      row,
      message:
        'the file is not valid UTF-8 here; if it was saved as Windows-1252 ("ANSI") or UTF-16 without a byte-order mark, ' +
        'pass --mapping with an "encoding" (see docs: ERP mapping)',
    });
  }
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

/** Offset of the first byte that breaks UTF-8 (only called once, on failure). */
function firstInvalidUtf8(buf: Buffer): number {
  let lo = 0;
  let hi = buf.length;
  // Binary search on the longest valid prefix, allowing for a split character at the cut.
  while (hi - lo > 4) {
    const mid = (lo + hi) >>> 1;
    const prefix = buf.subarray(0, mid);
    if (isUtf8(prefix.subarray(0, prefix.length - incompleteUtf8Tail(prefix)))) lo = mid;
    else hi = mid;
  }
  return lo;
}
