import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CsvScanner, countLineBreaks } from '../../../src/manifest/csv/csv-scanner.js';
import { dialectOf } from '../../../src/manifest/csv/csv-scanner.js';
import { SNIFF_BYTES } from '../../../src/manifest/csv/sniff.js';

/**
 * The scanner splits records itself (fast-records.ts) and hands the rest of the input to
 * csv-parse at the first record it does not handle: whatever the text and however it is cut
 * into chunks, the records and their rows must be exactly csv-parse's, errors included.
 */

const OPTIONS = {
  relax_quotes: true,
  relax_column_count: true,
  skip_empty_lines: false,
  record_delimiter: ['\r\n', '\n', '\r'],
};

/**
 * What csv-parse alone gives: the non-blank records and the physical row each starts on
 * (every record, blank ones too, takes one line plus the line breaks inside its cells), or its error.
 */
function reference(text: string, delimiter: string): { records: string[][]; rows: number[] } | { error: true } {
  let all: string[][];
  try {
    all = parse(text, { ...OPTIONS, delimiter }) as string[][];
  } catch {
    return { error: true };
  }
  const records: string[][] = [];
  const rows: number[] = [];
  let row = 1;
  for (const r of all) {
    if (r.some((c) => c.trim() !== '')) {
      records.push(r);
      rows.push(row);
    }
    row += 1 + countLineBreaks(r);
  }
  return { records, rows };
}

/** `bytes` pushed as chunks ending at the given byte offsets (and at the end). */
async function scanBytes(bytes: Buffer, delimiter: string, cutsAt: number[], encoding?: 'utf-8') {
  const records: string[][] = [];
  const rows: number[] = [];
  const take = (cells: string[], row: number) => {
    records.push(cells);
    rows.push(row);
  };
  const scanner = new CsvScanner({ ...dialectOf(), delimiter, encoding }, { header: take, record: take });
  let at = 0;
  for (const cut of [...cutsAt, bytes.length]) {
    if (cut > at) scanner.push(bytes.subarray(at, cut));
    at = Math.max(at, cut);
  }
  await scanner.finish();
  return { records, rows, problems: scanner.problems };
}

/** `text` pushed in chunks cut at the given fractions of its bytes. */
async function scan(text: string, delimiter: string, cuts: number[]) {
  const bytes = Buffer.from(text, 'utf8');
  return scanBytes(
    bytes,
    delimiter,
    cuts.map((c) => Math.floor(c * bytes.length)).sort((a, b) => a - b),
  );
}

const CHARS = ['a', 'b', ',', ';', '"', '"', '\n', '\r', '\r\n', ' ', 'é', '€'];
const csvText = fc.array(fc.constantFrom(...CHARS), { maxLength: 60 }).map((parts) => parts.join(''));
const cutsArb = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 });

describe('the scanner reads records as csv-parse does', () => {
  it('many small chunks through one reused buffer read as one chunk does (the first bytes are held as copies)', async () => {
    const text = `\uFEFFsep=;\norderNumber;code\n${Array.from({ length: 400 }, (_, i) => `A-${i};"x;\ny"`).join('\r\n')}\n`;
    const bytes = Buffer.from(text, 'utf8');
    const whole = await scanBytes(bytes, ';', []);
    const records: string[][] = [];
    const take = (cells: string[]) => records.push(cells);
    const scanner = new CsvScanner({ ...dialectOf(), delimiter: ';' }, { header: take, record: take });
    // One buffer, read into again for each chunk, as a file reader reuses its buffer.
    const buffer = Buffer.alloc(3);
    for (let at = 0; at < bytes.length; at += 3) {
      const n = bytes.copy(buffer, 0, at, at + 3);
      scanner.push(buffer.subarray(0, n));
    }
    await scanner.finish();
    expect(records).toEqual(whole.records);
    expect(records).toHaveLength(401); // the delimiter declared, and `sep=;` read past all the same
  });

  it('skipped lines end at CR, LF or CRLF, a CRLF cut between two chunks counted once', async () => {
    const take = async (text: string, cut: number) => {
      const got: Array<[string[], number]> = [];
      const on = (cells: string[], row: number) => got.push([cells, row]);
      const scanner = new CsvScanner({ delimiter: ';', skipRows: 2 }, { header: on, record: on });
      const bytes = Buffer.from(text, 'latin1');
      scanner.push(bytes.subarray(0, cut));
      scanner.push(bytes.subarray(cut));
      await scanner.finish();
      return got;
    };
    const want = [
      [['h1', 'h2'], 3],
      [['a', 'b'], 4],
    ];
    // Excel for Mac's "CSV (Macintosh)": every line ends with CR.
    expect(await take('Nightly export\rGenerated 2026-12-01\rh1;h2\ra;b\r', 3)).toEqual(want);
    // The first banner line ends exactly where the first chunk does, between its CR and LF.
    const banner = `${'x'.repeat(SNIFF_BYTES - 1)}\r\nGenerated\r\nh1;h2\r\na;b\r\n`;
    expect(await take(banner, SNIFF_BYTES)).toEqual(want);
  });

  it('random text, random chunks, comma and semicolon delimiters', async () => {
    await fc.assert(
      fc.asyncProperty(csvText, cutsArb, fc.constantFrom(',', ';'), async (text, cuts, delimiter) => {
        const want = reference(text, delimiter);
        const got = await scan(text, delimiter, cuts);
        if ('error' in want) {
          expect(got.problems.map((p) => p.code)).toContain('csv.parse');
        } else {
          expect(got.problems).toEqual([]);
          expect(got.records).toEqual(want.records);
          expect(got.rows).toEqual(want.rows);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('rows are physical lines: a quoted line break, then text after a closing quote (csv-parse takes over)', async () => {
    const text = 'h1,h2\r\n"a\nb",c\n"x"y,z\nlast,1';
    const got = await scan(text, ',', [0.3, 0.61]);
    expect(got.records).toEqual((reference(text, ',') as { records: string[][] }).records);
    expect(got.records[2]).toEqual(['"x"y', 'z']);
    expect(got.rows).toEqual([1, 2, 4, 5]);
  });

  it('a character split across chunks (2, 3 and 4 bytes) reads whole, on every path, at every cut', async () => {
    // Fast splitter; csv-parse from the start (a two-character delimiter); and the fast splitter
    // handing over to csv-parse midway (text after a closing quote on row 3).
    const cases: [string, string][] = [
      [',', 'h1,h2\nécu,€5\n日本,😀x\n'],
      ['||', 'h1||h2\nécu||€5\n日本||😀x\n'],
      [',', 'h1,h2\nécu,€5\n"é"€,😀\n日本,😀x\n'],
    ];
    for (const [delimiter, text] of cases) {
      const bytes = Buffer.from(text, 'utf8');
      const want = (reference(text, delimiter) as { records: string[][] }).records;
      for (let cut = 1; cut < bytes.length; cut++) {
        const got = await scanBytes(bytes, delimiter, [cut]);
        expect(got.problems, `${delimiter} cut at ${cut}`).toEqual([]);
        expect(got.records, `${delimiter} cut at ${cut}`).toEqual(want);
      }
      // One byte at a time: every character is split.
      const each = await scanBytes(
        bytes,
        delimiter,
        Array.from({ length: bytes.length }, (_, i) => i + 1),
      );
      expect(each.problems).toEqual([]);
      expect(each.records).toEqual(want);
    }
  });

  it('declared UTF-8: a file that ends inside a character, or holds a byte that is not UTF-8, is reported once', async () => {
    const cut = Buffer.from('h1,h2\na,€', 'utf8');
    const ends = await scanBytes(cut.subarray(0, cut.length - 1), ',', [cut.length - 2], 'utf-8');
    expect(ends.problems.map((p) => [p.code, p.row])).toEqual([['csv.encoding', 2]]);
    const bad = Buffer.concat([Buffer.from('h1,h2\na,'), Buffer.from([0xe2, 0x28]), Buffer.from('b\nc,€\n')]);
    const split = await scanBytes(bad, ',', [10, 11, 15], 'utf-8');
    expect(split.problems.map((p) => p.code)).toEqual(['csv.encoding']);
    expect(split.records).toHaveLength(3);
  });

  it('undeclared: the first non-ASCII bytes decide UTF-8 or Windows-1252, whatever the chunks', async () => {
    // München in Windows-1252 (0xFC), its first non-ASCII byte in a later chunk than the header.
    const ansi = Buffer.concat([
      Buffer.from('h1,h2\na,M'),
      Buffer.from([0xfc]),
      Buffer.from('nchen\nb,'),
      Buffer.from([0x80]),
      Buffer.from(' 5\n'),
    ]);
    const read = await scanBytes(ansi, ',', [3, 10, 11]);
    expect(read.problems).toEqual([]);
    expect(read.records).toEqual([
      ['h1', 'h2'],
      ['a', 'München'],
      ['b', '€ 5'],
    ]);
    // UTF-8 text first, then a byte that is not: two encodings mixed, reported at its row.
    const mixed = Buffer.concat([Buffer.from('h1,h2\na,€\nb,M'), Buffer.from([0xfc]), Buffer.from('nchen\n')]);
    const got = await scanBytes(mixed, ',', [12]);
    expect(got.problems.map((p) => [p.code, p.row])).toEqual([['csv.encoding', 3]]);
    expect(got.problems[0].message).toContain('mixes two encodings');
  });

  it("a quote never closed is csv-parse's error, at the row it opened on", async () => {
    const got = await scan('h1,h2\na,b\n"open,c\nd,e\n', ',', [0.5]);
    expect(got.records).toEqual([
      ['h1', 'h2'],
      ['a', 'b'],
    ]);
    expect(got.problems).toMatchObject([{ code: 'csv.parse', row: 3 }]);
    expect(got.problems[0].message).toContain('Quote Not Closed');
  });
});

/** The records of `text` read with keepText: cells, row and the record's own text when given. */
async function scanWithText(text: string, delimiter = ',', cutsAt: number[] = []) {
  const records: Array<{ cells: string[]; row: number; text?: string }> = [];
  const scanner = new CsvScanner(
    { ...dialectOf(), delimiter },
    {
      header: () => {},
      record: (cells, row, own) => records.push({ cells, row, ...(own === undefined ? {} : { text: own }) }),
    },
    { keepText: true },
  );
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  for (const cut of [...cutsAt, bytes.length]) {
    if (cut > at) scanner.push(bytes.subarray(at, cut));
    at = Math.max(at, cut);
  }
  await scanner.finish();
  return records;
}

describe("a record's own text (result.csv copies it)", () => {
  it('is given for strict records only: quoted line breaks kept, a bare quote or text after a closing quote not', async () => {
    const records = await scanWithText('h1\na,"b\r\nc",d\n,, \n"x""y",1" x 2"\n-1,z\n"a"b,c\nlast');
    expect(records).toEqual([
      { cells: ['a', 'b\r\nc', 'd'], row: 2, text: 'a,"b\r\nc",d' },
      { cells: ['x"y', '1" x 2"'], row: 5 },
      { cells: ['-1', 'z'], row: 6, text: '-1,z' },
      // csv-parse reads from here on: its records come without their text.
      { cells: ['"a"b', 'c'], row: 7 },
      { cells: ['last'], row: 8 },
    ]);
  });

  it('lone CR and mixed line ends: each line its record, with its text', async () => {
    expect(await scanWithText('h\ra,b\r\nc\nd\r')).toEqual([
      { cells: ['a', 'b'], row: 2, text: 'a,b' },
      { cells: ['c'], row: 3, text: 'c' },
      { cells: ['d'], row: 4, text: 'd' },
    ]);
  });

  it('parses, under csv-parse without relax_quotes, into exactly its cells (property)', async () => {
    await fc.assert(
      fc.asyncProperty(csvText, cutsArb, fc.constantFrom(',', ';'), async (text, cuts, delimiter) => {
        const bytes = Buffer.byteLength(text);
        const got = await scanWithText(
          `h\n${text}`,
          delimiter,
          cuts.map((c) => Math.floor(c * bytes)).sort((a, b) => a - b),
        );
        for (const r of got) {
          if (r.text === undefined) continue;
          const strict = parse(r.text, { delimiter, relax_column_count: true, record_delimiter: ['\r\n', '\n', '\r'] });
          expect(strict).toEqual([r.cells]);
        }
        // Text without quotes is all strict: every record comes with its text.
        if (!text.includes('"')) expect(got.every((r) => r.text !== undefined)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
