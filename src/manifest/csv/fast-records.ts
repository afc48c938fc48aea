/**
 * A fast splitter of CSV text into records, for the common shapes only — with the result
 * csv-parse gives under the reader's options (relax_quotes, CRLF/LF/CR each ending a record,
 * `""` inside quotes, empty lines kept as `['']`) — and an honest "not mine" for anything else.
 *
 * Why: csv-parse builds every cell as a Buffer and decodes it, which made parsing most of the
 * reader's time and much of its garbage; this splitter slices cells out of the decoded text.
 * It handles unquoted cells (a quote inside one is text, as with relax_quotes) and quoted cells
 * that close right before a delimiter, a line break or the end. Anything else — a closing quote
 * followed by other text, a quote never closed — makes it stop at the start of that record:
 * the scanner hands the rest of the input, from that record on, to csv-parse, whose state at
 * a record boundary is its initial state, so the result is the same as if csv-parse had read
 * everything (including its errors).
 */

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Takes a record; `end` is the offset in the text just after its line break (or its last cell
 * at the end). `mayBreak`: some quoted cell holds a line break (only a quoted cell can), so
 * the record spans more than one line.
 */
export type RecordSink = (cells: string[], end: number, mayBreak: boolean) => void;

/**
 * Where the next LF and CR are, at or after the last quoted cell looked at (-1: none in the
 * text; -2: not looked for yet). Moved forward only, so a text is searched about once per line.
 */
let nextLf = -2;
let nextCr = -2;

/** Whether text[from, to) holds a line break; `from` never decreases within one text. */
function breakWithin(text: string, from: number, to: number): boolean {
  if (nextLf !== -1 && nextLf < from) nextLf = text.indexOf('\n', from);
  if (nextCr !== -1 && nextCr < from) nextCr = text.indexOf('\r', from);
  return (nextLf >= 0 && nextLf < to) || (nextCr >= 0 && nextCr < to);
}

/**
 * How many cells the last record had: the next record's array is made that long up front.
 * Grown by pushes from empty, a 19-cell record's array was reallocated twice (capacity 16,
 * then 40): most of the splitter's garbage. Only a hint (a longer or shorter record just
 * grows or trims its array), capped so one absurd record cannot make every array big.
 */
let cellsHint = 0;
const MAX_CELLS_HINT = 1024;

/**
 * Splits `text[from..]` into records. Returns the offset where it stopped: the start of the
 * first record it did not deliver (incomplete unless `final`), and whether it stopped because
 * the record needs csv-parse (`fallback`). With `final`, the text is the end of the input.
 */
export function splitRecords(
  text: string,
  from: number,
  delimiter: number,
  final: boolean,
  sink: RecordSink,
  stopped: () => boolean,
): { at: number; fallback: boolean } {
  const len = text.length;
  let start = from;
  nextLf = nextCr = -2;
  outer: while (start < len && !stopped()) {
    // Filled by index (cells[n++]), then trimmed to n: see cellsHint.
    const cells: string[] = new Array<string>(cellsHint);
    let n = 0;
    let i = start;
    let breaks = false;
    for (;;) {
      // One cell starts at i.
      if (i < len && text.charCodeAt(i) === QUOTE) {
        let value = '';
        let j = i + 1;
        for (;;) {
          const k = text.indexOf('"', j);
          if (k < 0) {
            if (final) return { at: start, fallback: true }; // never closed: csv-parse's error
            return { at: start, fallback: false };
          }
          if (k + 1 >= len) {
            if (!final) return { at: start, fallback: false }; // `""` or the end: undecided yet
            breaks ||= breakWithin(text, i + 1, k);
            cells[n++] = value + text.slice(j, k);
            sink(finished(cells, n), len, breaks);
            return { at: len, fallback: false };
          }
          const next = text.charCodeAt(k + 1);
          if (next === QUOTE) {
            value += text.slice(j, k + 1);
            j = k + 2;
            continue;
          }
          breaks ||= breakWithin(text, i + 1, k);
          cells[n++] = value + text.slice(j, k);
          if (next === delimiter) {
            i = k + 2;
            break;
          }
          if (next === LF || next === CR) {
            const end = lineEnd(text, k + 1, final);
            if (end < 0) return { at: start, fallback: false };
            sink(finished(cells, n), end, breaks);
            start = end;
            continue outer;
          }
          return { at: start, fallback: true }; // text after a closing quote: csv-parse's rules
        }
        continue;
      }
      // An unquoted cell: up to the next delimiter or line break.
      let k = i;
      let c = 0;
      while (k < len) {
        c = text.charCodeAt(k);
        if (c === delimiter || c === LF || c === CR) break;
        k++;
      }
      if (k >= len) {
        if (!final) return { at: start, fallback: false };
        cells[n++] = text.slice(i, k);
        sink(finished(cells, n), len, breaks);
        return { at: len, fallback: false };
      }
      cells[n++] = k === i ? '' : text.slice(i, k);
      if (c === delimiter) {
        i = k + 1;
        continue;
      }
      const end = lineEnd(text, k, final);
      if (end < 0) return { at: start, fallback: false };
      sink(finished(cells, n), end, breaks);
      start = end;
      continue outer;
    }
  }
  return { at: start, fallback: false };
}

/** The record's cells, `n` of them; the next record's array is made this long. */
function finished(cells: string[], n: number): string[] {
  if (cells.length !== n) cells.length = n;
  cellsHint = n < MAX_CELLS_HINT ? n : MAX_CELLS_HINT;
  return cells;
}

/** Offset after the line break at `at` (CRLF is one); -1 when a CR ends the text and more may follow. */
function lineEnd(text: string, at: number, final: boolean): number {
  if (text.charCodeAt(at) === LF) return at + 1;
  if (at + 1 < text.length) return text.charCodeAt(at + 1) === LF ? at + 2 : at + 1;
  return final ? at + 1 : -1;
}
