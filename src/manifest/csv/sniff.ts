/**
 * What the first bytes and lines of a delimited-text input say about how to read it, when no
 * mapping declares it: whether it is text at all, its encoding, and its field separator. Pure;
 * the scanner (csv-scanner.ts) asks once per input, so the reader, the header read that
 * recognises a shop export, and result.csv's re-read all read the same file the same way.
 *
 * Spreadsheets write what the locale says: a German, French or Spanish Excel saves "CSV" with
 * `;` between fields (`,` is its decimal mark) in Windows-1252, and "Unicode text" as UTF-16 with
 * a byte-order mark and tabs; marketplaces hand out tab-separated `.txt` reports.
 */

/** The bytes the scanner holds before it decides; one read chunk. */
export const SNIFF_BYTES = 64 * 1024;
/** Decoded text the separator is judged on, and the records looked at in it. */
export const SNIFF_CHARS = 64 * 1024;
const SNIFF_RECORDS = 50;

/** The separators tried, in the order a tie is broken. */
const DELIMITERS = [',', ';', '\t'] as const;

/** Files that are not text, by their first bytes: what they are, for the message. */
const SIGNATURES: ReadonlyArray<{ bytes: readonly number[]; at?: number; what: string }> = [
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], what: 'a PDF document' }, // %PDF-
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'a PNG image' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image' },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: 'a GIF image' }, // GIF8
  { bytes: [0x49, 0x49, 0x2a, 0x00], what: 'a TIFF image' },
  { bytes: [0x4d, 0x4d, 0x00, 0x2a], what: 'a TIFF image' },
  { bytes: [0x57, 0x45, 0x42, 0x50], at: 8, what: 'a WebP image' },
  {
    bytes: [0x50, 0x4b, 0x03, 0x04],
    what: 'a zip archive, such as an Excel workbook (an .xlsx file is read by that name)',
  },
  {
    bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1],
    what: 'an Excel 97–2003 workbook (.xls) or another old Office file (save it as .xlsx or CSV)',
  },
  { bytes: [0x1f, 0x8b], what: 'a gzip archive' },
  { bytes: [0x52, 0x61, 0x72, 0x21], what: 'a RAR archive' }, // Rar!
  { bytes: [0x37, 0x7a, 0xbc, 0xaf], what: 'a 7-Zip archive' },
  { bytes: [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], what: 'an SQLite database' }, // SQLite
  { bytes: [0x7f, 0x45, 0x4c, 0x46], what: 'a program (ELF)' },
];

export type SniffedEncoding = 'utf-8' | 'utf-16le' | 'utf-16be';

export type ByteVerdict =
  /** `bom`: the byte-order mark's length, dropped before decoding; `encoding` undefined: not decided by the bytes. */
  { text: true; encoding?: SniffedEncoding; bom: number } | { text: false; message: string };

/**
 * The first bytes of an input: a byte-order mark decides the encoding (UTF-8, UTF-16 LE/BE); a
 * known file signature or a NUL byte outside UTF-16 says it is not text; UTF-16 without a mark
 * is told by its NUL bytes (every other byte of Latin text). `declared`: the mapping's encoding;
 * a declared UTF-16 takes NUL bytes as text, any other as a sign of binary data.
 */
export function sniffBytes(head: Uint8Array, declared?: string): ByteVerdict {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { text: true, encoding: 'utf-8', bom: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { text: true, encoding: 'utf-16le', bom: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { text: true, encoding: 'utf-16be', bom: 2 };
  for (const s of SIGNATURES) {
    const at = s.at ?? 0;
    if (s.bytes.every((b, i) => head[at + i] === b)) return notText(s.what);
  }
  if (declared?.startsWith('utf-16')) return { text: true, bom: 0 };
  if (head.indexOf(0) < 0) return { text: true, bom: 0 };
  const utf16 = declared === undefined ? utf16ByNuls(head) : undefined;
  return utf16 === undefined ? notText('binary data (it holds NUL bytes)') : { text: true, encoding: utf16, bom: 0 };
}

function notText(what: string): ByteVerdict {
  return {
    text: false,
    message:
      `not a text file: it looks like ${what}. An order export is delimited text (.csv, .tsv, .txt) ` +
      'or an .xlsx workbook',
  };
}

/** UTF-16 without a byte-order mark: NUL in most high bytes of its first characters, and in no low byte. */
function utf16ByNuls(head: Uint8Array): SniffedEncoding | undefined {
  const n = Math.min(head.length - (head.length % 2), 4096);
  if (n < 4) return undefined;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (head[i] === 0) even++;
    if (head[i + 1] === 0) odd++;
  }
  const pairs = n / 2;
  if (odd >= pairs * 0.4 && even === 0) return 'utf-16le';
  if (even >= pairs * 0.4 && odd === 0) return 'utf-16be';
  return undefined;
}

/** The longest `sep=` line with its line break: `"sep=;"` and CRLF. */
export const SEP_LINE_MAX = 9;

/**
 * An Excel `sep=;` first line: the separator it names, and the line's length with its line
 * break. Excel honours it; it is not a record. Tools that write the line as a one-cell CSV
 * record quote it (`"sep=;"`), which names the same separator.
 */

export function sepLine(text: string): { delimiter: string; length: number } | undefined {
  const m = /^(?:sep=(.)|"sep=([^"])")(\r\n|\n|\r)/.exec(text);
  return m === null ? undefined : { delimiter: m[1] ?? m[2], length: m[0].length };
}

/**
 * The field separator of a text: `,`, `;` or tab, whichever splits its first records most
 * consistently. Each is tried as the CSV grammar would read with it (a quote opens a quoted
 * cell only at a cell's start), on up to SNIFF_RECORDS records of which the first non-blank one
 * is the header: a separator the header does not contain is out; of the rest, the one most
 * later records have as many of as the header wins (then the one splitting the header into
 * more cells). Nothing to go on (one column): `,`. `final`: the text is the whole input, so its
 * last record is complete.
 */
export function sniffDelimiter(text: string, final: boolean): string {
  let best: { delimiter: string; score: number; width: number } | undefined;
  for (const delimiter of DELIMITERS) {
    const counts = separatorCounts(text, delimiter.charCodeAt(0), final);
    const width = counts[0] ?? 0;
    if (width === 0) continue;
    const rest = counts.slice(1);
    const score = rest.length === 0 ? 1 : rest.filter((c) => c === width).length / rest.length;
    if (best === undefined || score > best.score || (score === best.score && width > best.width))
      best = { delimiter, score, width };
  }
  return best?.delimiter ?? ',';
}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Separators outside quotes in each non-blank record of `text` read with `delimiter`, the
 * header first. A record left open at the end of a text that goes on is not counted.
 */
function separatorCounts(text: string, delimiter: number, final: boolean): number[] {
  const counts: number[] = [];
  let count = 0;
  let filled = false;
  let quoted = false;
  let cellStart = true;
  const end = Math.min(text.length, SNIFF_CHARS);
  for (let i = 0; i < end && counts.length < SNIFF_RECORDS; i++) {
    const c = text.charCodeAt(i);
    if (quoted) {
      if (c === QUOTE) {
        if (text.charCodeAt(i + 1) === QUOTE) i++;
        else quoted = false;
      } else if (c > 0x20) filled = true;
      continue;
    }
    if (c === delimiter) {
      count++;
      cellStart = true;
      continue;
    }
    if (c === LF || c === CR) {
      if (c === CR && text.charCodeAt(i + 1) === LF) i++;
      // A record of separators and blanks only is blank (the scanner skips it too).
      if (filled) counts.push(count);
      count = 0;
      filled = false;
      cellStart = true;
      continue;
    }
    if (c === QUOTE && cellStart) {
      quoted = true;
      cellStart = false;
      continue;
    }
    if (c > 0x20) filled = true;
    cellStart = false;
  }
  if (final && filled && !quoted && counts.length < SNIFF_RECORDS && end === text.length) counts.push(count);
  return counts;
}
