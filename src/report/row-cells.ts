import { neutraliseCell } from './neutralise.js';

/**
 * The result columns of result.csv for every row of a CSV or spreadsheet input, as plain data
 * that a worker thread can be handed (structured clone): each row points at one of a few
 * distinct "tails" — `_status, _jobNumber, _newAssetSku, _needsArtwork, _error` — since most
 * rows share theirs (`valid,,,,`). `_row` is the row's own number. Built from the report by
 * write-result-csv.ts (rowCellsOf); read here, by the writer in whichever thread writes.
 */
export interface RowCellsTable {
  /** Row → tail of an item row (≥ 0), or -1: the row is not an item (rows past the end are not either). */
  itemTail: Int32Array<ArrayBuffer>;
  /** Tails of rows that are not items but have something to say (skipped by a mapping, their own errors). */
  otherTail: Map<number, number>;
  /** Tail of any other row that is not an item. */
  plainTail: number;
  /** The distinct tails, five cells each. */
  tails: string[][];
  /** How many item rows the reader found (merged rows included). */
  itemRowCount: number;
  /** The input was refused for its size: it is not read again. */
  tooLarge: boolean;
}

export class RowCells {
  /** Each tail as result.csv's comma-separated text (`,valid,,,,`), made on first use. */
  private readonly texts: (string | undefined)[];

  constructor(readonly table: RowCellsTable) {
    this.texts = new Array<string | undefined>(table.tails.length);
  }

  get itemRowCount(): number {
    return this.table.itemRowCount;
  }

  get tooLarge(): boolean {
    return this.table.tooLarge;
  }

  isItem(row: number): boolean {
    return row < this.table.itemTail.length && this.table.itemTail[row] >= 0;
  }

  /** `_row, _status, _jobNumber, _newAssetSku, _needsArtwork, _error` of the input row. */
  cells(row: number): string[] {
    return [String(row), ...this.table.tails[this.tailOf(row)]];
  }

  /**
   * The row's cells but `_row`, as comma-separated CSV text, each cell after a comma,
   * neutralised and quoted as csvCell does; made once per distinct tail.
   */
  tailText(row: number): string {
    const t = this.tailOf(row);
    let text = this.texts[t];
    if (text === undefined) {
      text = '';
      for (const cell of this.table.tails[t]) text += `,${csvCell(neutraliseCell(cell))}`;
      this.texts[t] = text;
    }
    return text;
  }

  private tailOf(row: number): number {
    const t = row < this.table.itemTail.length ? this.table.itemTail[row] : -1;
    return t >= 0 ? t : (this.table.otherTail.get(row) ?? this.table.plainTail);
  }
}

/** One cell as csv-stringify writes it: quoted when it holds a comma, quote or line break. */
export function csvCell(value: string): string {
  if (value === '') return '';
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
