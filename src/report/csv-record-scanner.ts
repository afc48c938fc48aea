/**
 * Finds the records of a default-template CSV (comma, UTF-8) in its raw bytes, exactly where
 * the reader's csv-parse (relax_quotes; CRLF, LF or a lone CR each end a record) finds them in
 * a file whose line ends are uniform, without making any strings: result.csv then copies each
 * record's bytes verbatim instead of parsing the file a second time (the second parse cost as
 * much as the first).
 *
 * Only the common structure is mirrored. Anything else — a lone CR, line ends that change
 * mid-file (the reader takes them all), text after a closing quote, an unclosed quote — throws
 * NotVerbatim and the caller falls back to re-parsing. A record whose cells must be rewritten
 * (a formula-looking cell, a bare quote inside an unquoted cell) is flagged `reparse`.
 */

/** The bytes do something the verbatim copier does not mirror; re-parse the file instead. */
export class NotVerbatim extends Error {
  constructor(reason: string) {
    super(`result.csv cannot copy records verbatim: ${reason}`);
    this.name = 'NotVerbatim';
  }
}

/** How the scanned records end (a plain object, not a `const enum`, which isolated compilers cannot inline). */
export const LineEnd = { Unknown: 0, LF: 1, CRLF: 2 } as const;
export type LineEnd = (typeof LineEnd)[keyof typeof LineEnd];

const COMMA = 0x2c;
const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** First bytes of a cell a spreadsheet may run as a formula (neutralise.ts): = + - @ tab CR. */
const FORMULA_START = new Uint8Array(256);
for (const c of '=+-@\t\r') FORMULA_START[c.charCodeAt(0)] = 1;

/** ASCII whitespace as String.prototype.trim sees it (space, tab, VT, FF; CR/LF handled apart). */
const BLANK = new Uint8Array(256);
for (const c of ' \t\v\f') BLANK[c.charCodeAt(0)] = 1;

export class CsvRecordScanner {
  /** Line end of the file, learnt from its first unquoted line break as csv-parse does. */
  lineEnd: LineEnd = LineEnd.Unknown;

  // The last record found by scan():
  /** End of the record's text (exclusive), before its line end. */
  end = 0;
  /** Where the next record starts. */
  next = 0;
  /** Number of cells. */
  cells = 0;
  /** Some cell must be rewritten (formula-looking, or a bare quote): re-parse this record. */
  reparse = false;
  /** Only separators, quotes and ASCII whitespace: a blank record, which the reader skips. */
  blank = false;
  /** Line breaks inside quoted cells (CRLF counts once), for physical row numbers. */
  breaks = 0;

  /**
   * Scans the record starting at `start`. False when `buf` ends first and more bytes may
   * follow (`eof` false): call again with more. Throws NotVerbatim.
   */
  scan(buf: Uint8Array, start: number, eof: boolean): boolean {
    const n = buf.length;
    let p = start;
    let cells = 1;
    let reparse = false;
    let blank = true;
    let breaks = 0;
    for (;;) {
      // At the start of a cell.
      if (p < n && buf[p] === QUOTE) {
        p++;
        if (p < n && FORMULA_START[buf[p]] === 1) reparse = true;
        // Quoted text: "" is a quote; a quote followed by anything else closes.
        for (;;) {
          if (p >= n) {
            if (eof) throw new NotVerbatim('a quoted cell is not closed');
            return false;
          }
          const b = buf[p];
          if (b === QUOTE) {
            if (p + 1 >= n && !eof) return false;
            if (p + 1 < n && buf[p + 1] === QUOTE) {
              blank = false;
              p += 2;
              continue;
            }
            p++;
            break;
          }
          if (b === LF) breaks++;
          else if (b === CR) {
            if (p + 1 >= n && !eof) return false;
            if (p + 1 >= n || buf[p + 1] !== LF) breaks++;
          } else if (BLANK[b] !== 1) blank = false;
          p++;
        }
        if (p >= n) {
          if (!eof) return false;
          return this.found(p, p, cells, reparse, blank, breaks);
        }
        const b = buf[p];
        if (b === COMMA) {
          cells++;
          p++;
          continue;
        }
        if (b === LF || b === CR) return this.lineBreak(buf, p, eof, cells, reparse, blank, breaks);
        throw new NotVerbatim('text after a closing quote');
      }
      if (p < n && FORMULA_START[buf[p]] === 1) reparse = true;
      // Unquoted text, up to a comma or a line end; a quote in it is text (relax_quotes).
      for (;;) {
        if (p >= n) {
          if (!eof) return false;
          return this.found(p, p, cells, reparse, blank, breaks);
        }
        const b = buf[p];
        if (b === COMMA) break;
        if (b === LF || b === CR) return this.lineBreak(buf, p, eof, cells, reparse, blank, breaks);
        if (BLANK[b] !== 1) {
          blank = false;
          if (b === QUOTE) reparse = true;
        }
        p++;
      }
      cells++;
      p++;
    }
  }

  /** An unquoted line break at `p` ends the record; false when its second byte is not in yet. */
  private lineBreak(
    buf: Uint8Array,
    p: number,
    eof: boolean,
    cells: number,
    reparse: boolean,
    blank: boolean,
    breaks: number,
  ): boolean {
    const n = buf.length;
    if (buf[p] === CR) {
      if (p + 1 >= n && !eof) return false;
      if (p + 1 >= n || buf[p + 1] !== LF) throw new NotVerbatim('a carriage return that does not end a line');
      if (this.lineEnd === LineEnd.Unknown) this.lineEnd = LineEnd.CRLF;
      else if (this.lineEnd !== LineEnd.CRLF) throw new NotVerbatim('mixed line ends');
      return this.found(p, p + 2, cells, reparse, blank, breaks);
    }
    if (this.lineEnd === LineEnd.Unknown) this.lineEnd = LineEnd.LF;
    else if (this.lineEnd !== LineEnd.LF) throw new NotVerbatim('mixed line ends');
    return this.found(p, p + 1, cells, reparse, blank, breaks);
  }

  private found(end: number, next: number, cells: number, reparse: boolean, blank: boolean, breaks: number): true {
    this.end = end;
    this.next = next;
    this.cells = cells;
    this.reparse = reparse;
    this.blank = blank;
    this.breaks = breaks;
    return true;
  }
}
