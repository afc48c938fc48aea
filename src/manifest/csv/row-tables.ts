/**
 * Where the document's parts came from, kept in Int32Arrays allocated in blocks that are never
 * copied: for each job the row that set each job-level field, for each item its job and row.
 * Half the bytes of a plain array per number, and nothing for the collector to copy: peak RSS
 * in `npm run bench:check`.
 */

import { ItemRowTable } from './item-rows.js';

type Obj = Record<string, unknown>;

/** The row that set a job-level field (`slot`) of job `j`; 0 when no row did (never set, or a mapping constant). */
export interface FieldRowLookup {
  get(j: number, slot: number): number;
}

/**
 * The row that first set each job-level field of each job, `slotCount` slots per job
 * (numbered by the column plan). Almost every field is set on its job's first row, so a job
 * costs its first row and a bit per field set (8 bytes, where a row per slot cost 4 per
 * field); a field first set on a later row is kept in a full table for its block of jobs,
 * made only when a block has one.
 */
export class FieldRows implements FieldRowLookup {
  private readonly firstRow: Int32Array[] = [];
  /** Bit `slot` set: some row set that field. */
  private readonly setMask: Int32Array[] = [];
  /** Per block of jobs, when one of them has a field set on a later row: slotCount rows per job, 0 = its first row. */
  private readonly laterRows: Array<Int32Array | undefined> = [];

  constructor(readonly slotCount: number) {
    // A mask holds 31 slots; the template has fewer job-level fields than that.
    if (slotCount > 31) throw new Error(`at most 31 job-level fields, got ${slotCount}`);
  }

  /** Job `j` (the next one) starts on `row`. */
  addJob(j: number, row: number): void {
    const b = j >>> JOB_BLOCK_BITS;
    if (b === this.firstRow.length) {
      this.firstRow.push(new Int32Array(JOB_BLOCK));
      this.setMask.push(new Int32Array(JOB_BLOCK));
      this.laterRows.push(undefined);
    }
    this.firstRow[b][j & JOB_BLOCK_MASK] = row;
  }

  set(j: number, slot: number, row: number): void {
    const b = j >>> JOB_BLOCK_BITS;
    const at = j & JOB_BLOCK_MASK;
    this.setMask[b][at] |= 1 << slot;
    if (row === this.firstRow[b][at]) return;
    let later = this.laterRows[b];
    if (later === undefined) {
      later = new Int32Array(JOB_BLOCK * this.slotCount);
      this.laterRows[b] = later;
    }
    later[at * this.slotCount + slot] = row;
  }

  get(j: number, slot: number): number {
    const b = j >>> JOB_BLOCK_BITS;
    const at = j & JOB_BLOCK_MASK;
    if (b >= this.setMask.length || (this.setMask[b][at] & (1 << slot)) === 0) return 0;
    const later = this.laterRows[b]?.[at * this.slotCount + slot] ?? 0;
    return later > 0 ? later : this.firstRow[b][at];
  }
}

const JOB_BLOCK_BITS = 12;
const JOB_BLOCK = 1 << JOB_BLOCK_BITS;
const JOB_BLOCK_MASK = JOB_BLOCK - 1;

/**
 * Every item in file order, with its job and row. Each job's `items` and `itemRows` are made
 * at the end, exact-size: arrays grown by push per job reserve spare slots, and copying them
 * exact afterwards left the discarded arrays in the old generation, where nothing collected
 * them before the reports were written.
 */
export class ItemsInFileOrder {
  /**
   * Items, their jobs and rows in blocks of BLOCK that are never copied: a store grown by
   * doubling left its outgrown copies as garbage at the moment memory peaks, when the items
   * are handed out to their jobs.
   */
  private readonly items: Obj[][] = [];
  private readonly jobOf: Int32Array[] = [];
  private readonly rowOf: Int32Array[] = [];
  private total = 0;
  /** Per job: its items so far. */
  private perJob = new Int32Array(1024);

  /** Makes room for job `j`. */
  addJob(j: number): void {
    this.perJob = grow(this.perJob, j + 1);
  }

  /** How many items job `j` has so far: the index its next item gets. */
  countOf(j: number): number {
    return this.perJob[j];
  }

  add(item: Obj, j: number, row: number): void {
    const n = this.total++;
    const b = n >>> BLOCK_BITS;
    const at = n & BLOCK_MASK;
    if (at === 0) {
      this.items.push(new Array<Obj>(BLOCK));
      this.jobOf.push(new Int32Array(BLOCK));
      this.rowOf.push(new Int32Array(BLOCK));
    }
    this.items[b][at] = item;
    this.jobOf[b][at] = j;
    this.rowOf[b][at] = row;
    this.perJob[j]++;
  }

  /**
   * Gives every job its `items`, exact-size, in file order (a counting sort), and returns the
   * rows of each job's items as one table (item-rows.ts). Empties the store: the items now live
   * in the jobs.
   */
  distribute(jobs: Obj[]): ItemRowTable {
    const jobCount = jobs.length;
    const total = this.total;
    const start = new Int32Array(jobCount + 1);
    for (let j = 0; j < jobCount; j++) start[j + 1] = start[j] + this.perJob[j];
    const at = start.slice(0, jobCount);
    const order = new Int32Array(total);
    for (let n = 0; n < total; n++) order[at[this.jobOf[n >>> BLOCK_BITS][n & BLOCK_MASK]]++] = n;
    // One reused scratch array, never shortened (setting its length cost a call per job);
    // slice() then makes each job's array packed and exact.
    const items: Obj[] = [];
    const rows = new Int32Array(total);
    for (let j = 0; j < jobCount; j++) {
      let count = 0;
      for (let p = start[j]; p < start[j + 1]; p++) {
        const n = order[p];
        items[count++] = this.items[n >>> BLOCK_BITS][n & BLOCK_MASK];
        rows[p] = this.rowOf[n >>> BLOCK_BITS][n & BLOCK_MASK];
      }
      jobs[j].items = items.slice(0, count);
    }
    this.items.length = this.jobOf.length = this.rowOf.length = this.total = 0;
    this.perJob = new Int32Array(0);
    return new ItemRowTable(start, rows);
  }
}

// Small enough that a window's read (a few hundred jobs' items) fills one block that is not a
// large object: a block of 64Ki items is half a megabyte of zeroed memory a window, mostly unused.
const BLOCK_BITS = 12;
const BLOCK = 1 << BLOCK_BITS;
const BLOCK_MASK = BLOCK - 1;

/** `a` itself when it holds `length` numbers, else a copy at least twice as long. */
function grow(a: Int32Array<ArrayBuffer>, length: number): Int32Array<ArrayBuffer> {
  if (length <= a.length) return a;
  const grown = new Int32Array(Math.max(length, a.length * 2));
  grown.set(a);
  return grown;
}
