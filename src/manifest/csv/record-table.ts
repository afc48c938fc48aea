/**
 * The job index's tables: per record (a data row of the file, in file order) its byte offset
 * and physical row, and per job (in order of first appearance) its records as a linked list
 * through the records (`next`), so that a job's rows need not be adjacent and no sort is needed
 * after the pass. Typed arrays in blocks that are never copied: 12 bytes a record and 8 a job
 * while indexing (4 once done), outside the JavaScript heap.
 *
 * Offsets are kept as their low 32 bits; records are in file order, so offsets only grow and
 * the high part is the number of 4 GiB boundaries passed before the record (`wraps`).
 */
const BLOCK_BITS = 16;
const BLOCK = 1 << BLOCK_BITS;
const MASK = BLOCK - 1;
const TWO_32 = 2 ** 32;

export class RecordTable {
  private readonly low: Uint32Array[] = [];
  private readonly rows: Uint32Array[] = [];
  private readonly next: Int32Array[] = [];
  /** Per job: its first record, and (while indexing) its last. */
  private readonly firsts: Int32Array[] = [];
  private lasts: Int32Array[] | undefined = [];
  /** Record numbers from which the offset's high part is 1, 2, … */
  private readonly wraps: number[] = [];
  private records = 0;
  private jobs = 0;

  get recordCount(): number {
    return this.records;
  }

  get jobCount(): number {
    return this.jobs;
  }

  /** A new job, starting with no records; its number. */
  addJob(): number {
    const j = this.jobs++;
    if ((j & MASK) === 0) {
      this.firsts.push(new Int32Array(BLOCK).fill(-1));
      this.lasts?.push(new Int32Array(BLOCK).fill(-1));
    }
    return j;
  }

  /** The next record of the file: at byte `offset`, on physical row `row`, a row of job `j`. */
  add(offset: number, row: number, j: number): void {
    const k = this.records++;
    const b = k >>> BLOCK_BITS;
    if ((k & MASK) === 0) {
      this.low.push(new Uint32Array(BLOCK));
      this.rows.push(new Uint32Array(BLOCK));
      this.next.push(new Int32Array(BLOCK));
    }
    while (offset >= (this.wraps.length + 1) * TWO_32) this.wraps.push(k);
    if (row > 0xffffffff) throw new RangeError(`row ${row} is beyond what the job index numbers`);
    this.low[b][k & MASK] = offset % TWO_32;
    this.rows[b][k & MASK] = row;
    this.next[b][k & MASK] = -1;
    const lasts = this.lasts as Int32Array[];
    const jb = j >>> BLOCK_BITS;
    const last = lasts[jb][j & MASK];
    if (last < 0) this.firsts[jb][j & MASK] = k;
    else this.next[last >>> BLOCK_BITS][last & MASK] = k;
    lasts[jb][j & MASK] = k;
  }

  /** Indexing is over: the tables only needed to add records go. */
  seal(): void {
    this.lasts = undefined;
  }

  offsetOf(k: number): number {
    let high = 0;
    while (high < this.wraps.length && this.wraps[high] <= k) high++;
    return this.low[k >>> BLOCK_BITS][k & MASK] + high * TWO_32;
  }

  rowOf(k: number): number {
    return this.rows[k >>> BLOCK_BITS][k & MASK];
  }

  /** How many records job `j` has. */
  countOf(j: number): number {
    let n = 0;
    for (let k = this.firstOf(j); k >= 0; k = this.next[k >>> BLOCK_BITS][k & MASK]) n++;
    return n;
  }

  /** Job `j`'s `n`-th record (its `n`-th item's row), or -1. */
  recordOf(j: number, n: number): number {
    let k = this.firstOf(j);
    for (let i = 0; k >= 0 && i < n; i++) k = this.next[k >>> BLOCK_BITS][k & MASK];
    return k;
  }

  private firstOf(j: number): number {
    return j >= 0 && j < this.jobs ? this.firsts[j >>> BLOCK_BITS][j & MASK] : -1;
  }

  /** The records of jobs [from, to), in file order. */
  recordsOf(from: number, to: number): Int32Array {
    const found: number[] = [];
    for (let j = from; j < to; j++) {
      for (let k = this.firsts[j >>> BLOCK_BITS][j & MASK]; k >= 0; k = this.next[k >>> BLOCK_BITS][k & MASK])
        found.push(k);
    }
    return Int32Array.from(found).sort();
  }

  /** Bytes held by the tables (typed arrays, outside the JavaScript heap). */
  get bytes(): number {
    const blocks = this.low.length * 3 + this.firsts.length + (this.lasts?.length ?? 0);
    return blocks * BLOCK * 4;
  }
}
