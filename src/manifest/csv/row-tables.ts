/**
 * Where the document's parts came from, kept in Int32Arrays that grow by doubling: for each
 * job the row that set each job-level field, for each item its job and row. A million rows
 * must fit with room to spare: 4 bytes a number, where a plain array takes 8 or more.
 */

type Obj = Record<string, unknown>;

/**
 * The row that first set each job-level field of each job: `slotCount` slots per job
 * (numbered by the column plan), 0 where no row did (never set, or a mapping constant).
 */
export class FieldRows {
  private rows: Int32Array<ArrayBuffer>;

  constructor(
    readonly slotCount: number,
    jobCapacity = 0,
  ) {
    this.rows = new Int32Array(jobCapacity * slotCount);
  }

  /** Makes room for job `j`. */
  addJob(j: number): void {
    this.rows = grow(this.rows, (j + 1) * this.slotCount);
  }

  set(j: number, slot: number, row: number): void {
    this.rows[j * this.slotCount + slot] = row;
  }

  get(j: number, slot: number): number {
    return this.rows[j * this.slotCount + slot];
  }

  /** Exact size: the doubling buffer may be half empty, and this copy stays alive with the source map. */
  exact(jobCount: number): Int32Array<ArrayBuffer> {
    return this.rows.slice(0, jobCount * this.slotCount);
  }
}

/**
 * Every item in file order, with its job and row. Each job's `items` and `itemRows` are made
 * at the end, exact-size: arrays grown by push per job reserve ~17 slots each, and copying
 * them exact afterwards left ~45 MB of discarded arrays (a million rows) in the old
 * generation, where nothing collected them before the reports were written.
 */
export class ItemsInFileOrder {
  private readonly items: Obj[] = [];
  private jobOf = new Int32Array(4096);
  private rowOf = new Int32Array(4096);
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
    const n = this.items.length;
    this.jobOf = grow(this.jobOf, n + 1);
    this.rowOf = grow(this.rowOf, n + 1);
    this.items.push(item);
    this.jobOf[n] = j;
    this.rowOf[n] = row;
    this.perJob[j]++;
  }

  /**
   * Gives every job its `items`, exact-size, in file order (a counting sort), and returns each
   * job's item rows likewise. Empties the store: the items now live in the jobs.
   */
  distribute(jobs: Obj[]): number[][] {
    const jobCount = jobs.length;
    const total = this.items.length;
    const start = new Int32Array(jobCount + 1);
    for (let j = 0; j < jobCount; j++) start[j + 1] = start[j] + this.perJob[j];
    const at = start.slice(0, jobCount);
    const order = new Int32Array(total);
    for (let n = 0; n < total; n++) order[at[this.jobOf[n]]++] = n;
    // One reused scratch array; slice() then makes each job's arrays packed and exact.
    const items: Obj[] = [];
    const rows: number[] = [];
    const itemRows = new Array<number[]>(jobCount);
    for (let j = 0; j < jobCount; j++) {
      items.length = 0;
      rows.length = 0;
      for (let p = start[j]; p < start[j + 1]; p++) {
        items.push(this.items[order[p]]);
        rows.push(this.rowOf[order[p]]);
      }
      jobs[j].items = items.slice();
      itemRows[j] = rows.slice();
    }
    this.items.length = 0;
    this.jobOf = this.rowOf = this.perJob = new Int32Array(0);
    return itemRows;
  }
}

/** `a` itself when it holds `length` numbers, else a copy at least twice as long. */
function grow(a: Int32Array<ArrayBuffer>, length: number): Int32Array<ArrayBuffer> {
  if (length <= a.length) return a;
  const grown = new Int32Array(Math.max(length, a.length * 2));
  grown.set(a);
  return grown;
}
