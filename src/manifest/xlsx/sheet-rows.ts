/**
 * One sheet's rows, streamed from its part through saxes: each row's cells are turned into text
 * as they close (xlsx-cells.ts) and held to the CSV limits there, so a row over a limit stops
 * at its cell, before the rest of it is read. Rows are handed on after each chunk of the part.
 * Once the sheet's data ends (`</sheetData>`), the rest of the part is unpacked but not parsed:
 * the archive still checks it unpacks to the size it declares.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { SaxesTagPlain } from 'saxes';
import type { CsvLimits } from '../read-input.js';
import type { NumberFormat } from './number-formats.js';
import { localName, xmlParser } from './workbook-parts.js';
import { cellText, type StoredCell } from './xlsx-cells.js';

/** Cells a row may reach (csvMaxColumns) and bytes of its cells' text as UTF-8 (csvMaxRecordBytes). */
export type RowLimits = Pick<CsvLimits, 'maxColumns' | 'maxRecordBytes'>;

export type SheetRow = { row: number; cells: string[] };

/** What reading the sheet needs from the rest of the workbook, and the mapping's rows to skip. */
export interface SheetContext {
  strings: readonly string[];
  /** Each cell style's number format, by the cell's `s`. */
  formats: readonly NumberFormat[];
  date1904: boolean;
  skipRows: number;
  limits: RowLimits;
}

/** A row whose cells pass csvMaxColumns or csvMaxRecordBytes: the row, and why. */
export class RowOverLimit extends Error {
  constructor(
    readonly row: number,
    message: string,
  ) {
    super(message);
  }
}

/** A row of the sheet's XML longer than a row of csvMaxRecordBytes of text can be. */
export class RowTooLarge extends Error {}

/** The part's bytes could not be read whole (its zip entry), whatever row the XML was at. */
export class PartBroken extends Error {}

/**
 * The sheet's non-blank rows after `skipRows`, the first of them (the header) as stored and
 * each later one at least as wide as it (blank cells at a row's end are not stored). `onRow`
 * is told each row read whole, for a located error.
 */
export async function* sheetRows(
  part: Readable,
  context: SheetContext,
  onRow: (row: number) => void,
): AsyncGenerator<SheetRow> {
  const sheet = new SheetState(context, onRow);
  const parser = xmlParser({
    open: (tag) => sheet.open(tag),
    close: (tag) => sheet.close(tag),
    text: (text) => sheet.text(text),
  });
  const decoder = new StringDecoder('utf8');
  // The parser holds at most the XML fed since the last row ended (the start of the chunk it
  // ended in): a row is stopped when that runs past what csvMaxRecordBytes of text can take
  // (each byte escaped as `&quot;`, and the markup of a thousand cells), before it is fed.
  const maxRowXml = 8 * context.limits.maxRecordBytes + 1024 * 1024;
  let fed = 0;
  let since = 0;
  const chunks = part[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await chunks.next().catch((err: Error) => {
        throw new PartBroken(err.message);
      });
      if (step.done) break;
      if (sheet.ended) continue;
      const chunk = step.value as Buffer;
      if (fed + chunk.length - since > maxRowXml) {
        throw new RowTooLarge(`a row's XML runs past ${maxRowXml} bytes (limit csvMaxRecordBytes)`);
      }
      const start = fed;
      fed += chunk.length;
      try {
        parser.write(decoder.write(chunk));
      } finally {
        if (sheet.rowEnded) since = start;
        sheet.rowEnded = false;
        // Rows read whole before a break are handed on before it.
        yield* sheet.take();
      }
    }
  } finally {
    // A reader that stops early (the header alone) leaves nothing streaming.
    part.destroy();
  }
  if (sheet.ended) return;
  parser.write(decoder.end());
  parser.close();
  yield* sheet.take();
}

/** The parser's state in the sheet: the row and cell it is in, and the rows read whole. */
class SheetState {
  /** `</sheetData>` was read. */
  ended = false;
  /** A row ended (or the sheet's data began) since this was last reset. */
  rowEnded = false;
  private rows: SheetRow[] = [];
  private inData = false;
  private header: number | undefined;
  // The row being read: its number, whether it is skipped, its cells' text and their bytes.
  private row: number | undefined;
  private last = 0;
  private skipped = false;
  private cells: string[] = [];
  private bytes = 0;
  // The cell being read: its column, what is stored, whether its text is being taken.
  private col = 0;
  private cell: StoredCell | undefined;
  private hasValue = false;
  private taking = false;
  private inline = false;
  private phonetic = 0;

  constructor(
    private readonly context: SheetContext,
    private readonly onRow: (row: number) => void,
  ) {}

  /** The rows read whole since the last call. */
  take(): SheetRow[] {
    const rows = this.rows;
    this.rows = [];
    return rows;
  }

  open({ name, attributes: a }: SaxesTagPlain): void {
    switch (localName(name)) {
      case 'sheetData':
        this.inData = this.rowEnded = true;
        return;
      case 'row':
        if (this.inData) this.startRow(a.r);
        return;
      case 'c':
        if (this.row !== undefined) this.startCell(a);
        return;
      case 'v':
        if (this.cell !== undefined) this.taking = this.hasValue = true;
        return;
      case 'is':
        if (this.cell !== undefined) this.inline = this.hasValue = true;
        return;
      case 't':
        if (this.inline && this.phonetic === 0) this.taking = true;
        return;
      case 'rPh':
        this.phonetic++;
        return;
    }
  }

  close({ name }: SaxesTagPlain): void {
    switch (localName(name)) {
      case 'v':
      case 't':
        this.taking = false;
        return;
      case 'rPh':
        this.phonetic--;
        return;
      case 'is':
        this.inline = false;
        return;
      case 'c':
        if (this.cell !== undefined && this.hasValue) this.addCell(this.cell);
        this.cell = undefined;
        return;
      case 'row':
        if (this.row !== undefined) this.endRow(this.row);
        return;
      case 'sheetData':
        this.ended = true;
        return;
    }
  }

  text(text: string): void {
    if (this.taking && this.cell !== undefined) this.cell.value += text;
  }

  private startRow(r: string | undefined): void {
    const n = r === undefined ? Number.NaN : Number(r);
    this.row = this.last = Number.isSafeInteger(n) && n > 0 ? n : this.last + 1;
    this.skipped = this.row <= this.context.skipRows;
    this.cells = [];
    this.bytes = 0;
    this.col = 0;
  }

  private endRow(row: number): void {
    this.row = undefined;
    this.rowEnded = true;
    this.onRow(row);
    if (this.skipped || this.cells.every((c) => c.trim() === '')) return;
    if (this.header === undefined) this.header = this.cells.length;
    while (this.cells.length < this.header) this.cells.push('');
    this.rows.push({ row, cells: this.cells });
  }

  private startCell(a: Record<string, string>): void {
    this.col = columnOf(a.r) ?? this.col + 1;
    this.hasValue = this.taking = this.inline = false;
    this.phonetic = 0;
    if (this.skipped) return;
    const format = this.context.formats[a.s === undefined ? 0 : Number(a.s)];
    this.cell = { type: a.t, value: '', format };
  }

  /** The cell's text in its column, unless the row passes a limit with it. */
  private addCell(cell: StoredCell): void {
    const { limits, strings, date1904 } = this.context;
    const row = this.row as number;
    if (this.col > limits.maxColumns) {
      throw new RowOverLimit(row, `this row reaches past column ${limits.maxColumns}, the limit (limit csvMaxColumns)`);
    }
    let text: string;
    try {
      text = cellText(cell, strings, date1904);
    } catch (err) {
      throw new Error(`cell ${columnName(this.col)}${row}: ${(err as Error).message}`);
    }
    // A string's UTF-16 length is at most its UTF-8 bytes: a huge one is refused unmeasured.
    this.bytes += text.length > limits.maxRecordBytes ? text.length : Buffer.byteLength(text);
    if (this.bytes > limits.maxRecordBytes) {
      const limit = `${limits.maxRecordBytes}-byte limit (limit csvMaxRecordBytes)`;
      throw new RowOverLimit(row, `column ${columnName(this.col)}: this row's cells are over the ${limit}`);
    }
    while (this.cells.length < this.col - 1) this.cells.push('');
    this.cells[this.col - 1] = text;
  }
}

/** A cell reference's column (`C5` → 3); undefined without letters. */
function columnOf(ref: string | undefined): number | undefined {
  if (ref === undefined) return undefined;
  let col = 0;
  let i = 0;
  for (; i < ref.length; i++) {
    const letter = ref.charCodeAt(i) | 0x20; // lower case
    if (letter < 97 || letter > 122) break;
    col = col * 26 + letter - 96;
  }
  return i === 0 ? undefined : col;
}

/** A column's letters as Excel shows them: 1 → A, 27 → AA. */
function columnName(col: number): string {
  let name = '';
  for (let n = col; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}
