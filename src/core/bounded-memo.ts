/**
 * Answers kept by key that start over once `limit` are kept: a process fed a million distinct
 * values (a hostile file, a year's backfill) holds at most `limit` of them, and the usual few
 * keys of a run are answered once each.
 */
export class BoundedMemo<K, V> {
  private readonly table = new Map<K, V>();

  constructor(private readonly limit: number) {}

  /** The answer kept for `key`, else `compute()`'s, kept. */
  answer(key: K, compute: () => V): V {
    if (this.table.has(key)) return this.table.get(key) as V;
    const found = compute();
    this.set(key, found);
    return found;
  }

  has(key: K): boolean {
    return this.table.has(key);
  }

  get(key: K): V | undefined {
    return this.table.get(key);
  }

  set(key: K, value: V): void {
    if (this.table.size >= this.limit) this.table.clear();
    this.table.set(key, value);
  }
}
