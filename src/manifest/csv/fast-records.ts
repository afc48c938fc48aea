/**
 * The fast path of the one CSV grammar: splits decoded text into records for the common shapes
 * only, with the result csv-parse gives under the scanner's options (relax_quotes; CRLF, LF and
 * a lone CR each ending a record; `""` inside quotes; an empty line as `['']`), and an honest
 * "not mine" for anything else.
 *
 * It handles unquoted cells (a quote inside one is text, as with relax_quotes) and quoted cells
 * that close right before a delimiter, a line break or the end. Anything else — text after a
 * closing quote, a quote never closed — stops it at the start of that record, and the scanner
 * hands the rest of the input to csv-parse, whose state at a record boundary is its initial
 * state: what comes out, errors included, is what csv-parse alone gives (fast-records.test.ts
 * checks this on random text cut into random chunks).
 *
 * It buys `npm run bench:check` its parse time: csv-parse builds every cell as a Buffer and
 * decodes it, where this slices cells out of the decoded text.
 */

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** record(): the record is not complete in this text; more may follow. */
const MORE = -1;
/** record(): csv-parse must read this record. */
const HAND_OVER = -2;
/** A record's cell array starts at the last record's width, up to this (a hint only). */
const MAX_CELLS_HINT = 1024;

/**
 * Takes a record. `lineEnd`: where its line break starts (the end of its own text); `end`: just
 * after the line break. `mayBreak`: some quoted cell holds a line break, so the record spans more
 * than one line. `strict` (when kept): every quote of its text belongs to a quoted cell, so the
 * text is valid CSV under strict rules too (no bare quote inside an unquoted cell).
 */
export type RecordSink = (cells: string[], lineEnd: number, end: number, mayBreak: boolean, strict: boolean) => void;

export class FastRecords {
  private text = '';
  private final = false;
  /** The record record() found last. */
  private cells: string[] = [];
  private lineEnd = 0;
  private mayBreak = false;
  private strict = false;
  /**
   * Where the next LF, CR and quote are, at or after the last place looked (-1: none in the text;
   * -2: not looked for yet). Moved forward only, so a text is searched about once.
   */
  private nextLf = -2;
  private nextCr = -2;
  private nextQuote = -2;
  /** How many cells the last record had: filling an array made that long avoids regrowing it. */
  private cellsHint = 0;

  /** `keepStrict`: tell the sink whether each record is strict CSV (result.csv copies those). */
  constructor(
    private readonly delimiter: number,
    private readonly keepStrict = false,
  ) {}

  /**
   * Splits `text` into records. Returns where it stopped: the start of the first record it did
   * not deliver (incomplete unless `final`, the text being the end of the input), and whether
   * that record needs csv-parse (`fallback`).
   */
  split(text: string, final: boolean, sink: RecordSink, stopped: () => boolean): { at: number; fallback: boolean } {
    this.text = text;
    this.final = final;
    this.nextLf = this.nextCr = this.nextQuote = -2;
    let start = 0;
    while (start < text.length && !stopped()) {
      const end = this.record(start);
      if (end < 0) return { at: start, fallback: end === HAND_OVER };
      sink(this.cells, this.lineEnd, end, this.mayBreak, this.strict);
      start = end;
    }
    return { at: start, fallback: false };
  }

  /** Reads the record at `start`; returns the offset after its line break, or MORE / HAND_OVER. */
  private record(start: number): number {
    const text = this.text;
    const len = text.length;
    const delimiter = this.delimiter;
    const cells: string[] = new Array<string>(this.cellsHint);
    let n = 0;
    let i = start;
    this.mayBreak = false;
    this.strict = this.keepStrict;
    for (;;) {
      let at: number; // where this cell ends: a delimiter, a line break or the end of the text
      if (i < len && text.charCodeAt(i) === QUOTE) {
        at = this.quotedCell(i, cells, n++);
        if (at < 0) return at;
      } else {
        at = i;
        while (at < len) {
          const c = text.charCodeAt(at);
          if (c === delimiter || c === LF || c === CR) break;
          at++;
        }
        if (at >= len && !this.final) return MORE;
        cells[n++] = at === i ? '' : text.slice(i, at);
        if (this.keepStrict && this.strict && this.quoteWithin(i, at)) this.strict = false;
      }
      if (at >= len) return this.found(cells, n, len, len);
      const c = text.charCodeAt(at);
      if (c === delimiter) {
        i = at + 1;
        continue;
      }
      if (c !== LF && c !== CR) return HAND_OVER; // text after a closing quote: csv-parse's rules
      const end = afterLineBreak(text, at, this.final);
      return end < 0 ? MORE : this.found(cells, n, at, end);
    }
  }

  /** Reads the quoted cell at `i` into cells[n]; returns the offset after its closing quote, or MORE / HAND_OVER. */
  private quotedCell(i: number, cells: string[], n: number): number {
    const text = this.text;
    let value = '';
    let j = i + 1;
    for (;;) {
      const k = text.indexOf('"', j);
      if (k < 0) return this.final ? HAND_OVER : MORE; // never closed: csv-parse's error
      if (k + 1 >= text.length && !this.final) return MORE; // `""` or the end: undecided yet
      if (text.charCodeAt(k + 1) === QUOTE) {
        value += text.slice(j, k + 1);
        j = k + 2;
        continue;
      }
      if (!this.mayBreak && this.breakWithin(i + 1, k)) this.mayBreak = true;
      cells[n] = value + text.slice(j, k);
      return k + 1;
    }
  }

  private found(cells: string[], n: number, lineEnd: number, end: number): number {
    if (cells.length !== n) cells.length = n;
    this.cellsHint = n < MAX_CELLS_HINT ? n : MAX_CELLS_HINT;
    this.cells = cells;
    this.lineEnd = lineEnd;
    return end;
  }

  /** Whether text[from, to) holds a line break; `from` never decreases within one text. */
  private breakWithin(from: number, to: number): boolean {
    if (this.nextLf !== -1 && this.nextLf < from) this.nextLf = this.text.indexOf('\n', from);
    if (this.nextCr !== -1 && this.nextCr < from) this.nextCr = this.text.indexOf('\r', from);
    return (this.nextLf >= 0 && this.nextLf < to) || (this.nextCr >= 0 && this.nextCr < to);
  }

  /** Whether text[from, to) holds a quote; `from` never decreases within one text. */
  private quoteWithin(from: number, to: number): boolean {
    if (this.nextQuote !== -1 && this.nextQuote < from) this.nextQuote = this.text.indexOf('"', from);
    return this.nextQuote >= 0 && this.nextQuote < to;
  }
}

/** Offset after the line break at `at` (CRLF is one); -1 when a CR ends the text and more may follow. */
function afterLineBreak(text: string, at: number, final: boolean): number {
  if (text.charCodeAt(at) === LF) return at + 1;
  if (at + 1 < text.length) return text.charCodeAt(at + 1) === LF ? at + 2 : at + 1;
  return final ? at + 1 : -1;
}
