/**
 * The rows of each job's items, for a CSV or spreadsheet input: two Int32Arrays (where each
 * job's items start, and every item's row in job order) instead of an array per job, which
 * `check` keeps until its reports are written: lower peak RSS in `npm run bench:check`.
 *
 * `CsvOrigin.itemRows` (number[][], the model's public shape) is made from them only when
 * something reads it (ERP mappings that merge lines, library callers, tests): an own enumerable
 * getter that builds the arrays once and replaces itself with a plain data property, as the
 * report's lazy items do. htorder's own readers use itemRowOf / itemCountOf, which read the
 * table while the arrays are not made and the arrays once they are (or were assigned).
 */
import type { CsvOrigin } from '../model.js';

/** Where each job's items' rows come from: a table of the whole read's, or the job index's (job-view.ts). */
export interface ItemRows {
  readonly jobCount: number;
  count(j: number): number;
  row(j: number, k: number): number | undefined;
  toArrays(): number[][];
}

export class ItemRowTable implements ItemRows {
  constructor(
    /** jobCount + 1 offsets into `rows`. */
    private readonly start: Int32Array,
    /** Every item's row, job by job. */
    private readonly rows: Int32Array,
  ) {}

  get jobCount(): number {
    return this.start.length - 1;
  }

  count(j: number): number {
    return j >= 0 && j < this.jobCount ? this.start[j + 1] - this.start[j] : 0;
  }

  row(j: number, k: number): number | undefined {
    return k >= 0 && k < this.count(j) ? this.rows[this.start[j] + k] : undefined;
  }

  toArrays(): number[][] {
    const out = new Array<number[]>(this.jobCount);
    for (let j = 0; j < out.length; j++) out[j] = Array.from(this.rows.subarray(this.start[j], this.start[j + 1]));
    return out;
  }
}

const TABLE = Symbol('htorder.itemRowTable');
type WithTable = CsvOrigin & { [TABLE]?: ItemRows };

/** A CsvOrigin whose `itemRows` arrays are made from `table` on first read. */
export function csvOriginOf(header: string[], skipRows: number, table: ItemRows): CsvOrigin {
  const origin = { header, skipRows } as WithTable;
  Object.defineProperty(origin, 'itemRows', {
    enumerable: true,
    configurable: true,
    get(this: WithTable): number[][] {
      const rows = table.toArrays();
      settle(this, rows);
      return rows;
    },
    set(this: WithTable, rows: number[][]) {
      settle(this, rows);
    },
  });
  Object.defineProperty(origin, TABLE, { value: table, writable: true, configurable: true, enumerable: false });
  return origin;
}

/** From now on the arrays are the truth: a plain data property, and the table is dropped. */
function settle(origin: WithTable, rows: number[][]): void {
  Object.defineProperty(origin, 'itemRows', { value: rows, enumerable: true, configurable: true, writable: true });
  origin[TABLE] = undefined;
}

/** The row of job `j`'s item `k`, without making the arrays. */
export function itemRowOf(csv: CsvOrigin, j: number, k: number): number | undefined {
  const table = (csv as WithTable)[TABLE];
  return table !== undefined ? table.row(j, k) : csv.itemRows[j]?.[k];
}

/** How many items job `j` has rows for, without making the arrays. */
export function itemCountOf(csv: CsvOrigin, j: number): number {
  const table = (csv as WithTable)[TABLE];
  return table !== undefined ? table.count(j) : (csv.itemRows[j]?.length ?? 0);
}

/** How many jobs have item rows, without making the arrays. */
export function jobCountOf(csv: CsvOrigin): number {
  const table = (csv as WithTable)[TABLE];
  return table !== undefined ? table.jobCount : csv.itemRows.length;
}
