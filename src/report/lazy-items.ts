/**
 * Item results made on first use. A million-row manifest would otherwise hold a million
 * ItemResult objects (~200 MB) that `check` only writes out once; yet the pipeline mutates
 * item results (statuses, new asset SKUs), so they must also be ordinary objects when used.
 *
 * So a job's `items` starts as an own, enumerable getter (in the property's usual place, so
 * JSON key order and deep equality are unchanged) that builds the array once, replaces
 * itself with a plain data property, and returns it. Anything that reads `job.items` gets
 * ordinary, cached, mutable objects. The report writers instead use the functions below,
 * which read a job's items WITHOUT keeping them: a not-yet-built job's items are built
 * transiently (or not at all) and become garbage at once.
 *
 * A pending item has no errors, no API results, and the status its job had when the report
 * was built — exactly what buildReport would have stored eagerly.
 */
import type { ItemResult, JobResult, JobStatus, ReportError } from './model.js';

export interface PendingItems {
  /** How many items the job has. */
  count: number;
  /** Every item's status (the job's status when the report was built). */
  status: JobStatus;
  /** Builds item k. */
  build(k: number, status: JobStatus): ItemResult;
}

const PENDING = Symbol('htorder.pendingItems');

type WithPending = JobResult & { [PENDING]?: PendingItems };

/**
 * Adds `items` to `job` (after its other keys, where the report model has it), built from
 * `pending` on first access. Objects stay in V8's fast mode only when properties are ADDED
 * in this order and the symbol is deleted before `items` is redefined: reconfiguring a key
 * in place turns each job into a ~1 KB dictionary object.
 */
export function deferItems(job: Omit<JobResult, 'items'>, pending: PendingItems): JobResult {
  Object.defineProperty(job, 'items', { get: materialise, set: assign, enumerable: true, configurable: true });
  Object.defineProperty(job, PENDING, { value: pending, enumerable: false, configurable: true, writable: true });
  return job as JobResult;
}

function materialise(this: WithPending): ItemResult[] {
  const pending = this[PENDING];
  const items = pending === undefined ? [] : buildAll(pending);
  assign.call(this, items);
  return items;
}

function assign(this: WithPending, items: ItemResult[]): void {
  delete this[PENDING];
  Object.defineProperty(this, 'items', { value: items, enumerable: true, configurable: true, writable: true });
}

function buildAll(p: PendingItems): ItemResult[] {
  const items = new Array<ItemResult>(p.count);
  for (let k = 0; k < p.count; k++) items[k] = p.build(k, p.status);
  return items;
}

function pendingOf(job: JobResult): PendingItems | undefined {
  return (job as WithPending)[PENDING];
}

/** True while the job's items have not been built (nothing has read `job.items`). */
export function itemsPending(job: JobResult): boolean {
  return pendingOf(job) !== undefined;
}

/** The job's items, without building and keeping them: built ones, or transient copies. */
export function peekItems(job: JobResult): readonly ItemResult[] {
  const pending = pendingOf(job);
  return pending === undefined ? job.items : buildAll(pending);
}

/** How many items the job has, without building them. */
export function itemCount(job: JobResult): number {
  return pendingOf(job)?.count ?? job.items.length;
}

/** The item results that hold errors (pending items have none). */
export function builtItems(job: JobResult): readonly ItemResult[] {
  return pendingOf(job) === undefined ? job.items : [];
}

/** What an item's outcome columns show, for result.csv: the built item, or a shared stand-in. */
export type ItemOutcome = Pick<ItemResult, 'status' | 'newAssetSku' | 'needsArtworkToBeUploaded' | 'errors'>;

const NO_ERRORS: readonly ReportError[] = Object.freeze([]);
const STAND_INS = new Map<JobStatus, ItemOutcome>();

export function itemOutcome(job: JobResult, k: number): ItemOutcome | undefined {
  const pending = pendingOf(job);
  if (pending === undefined) return job.items[k];
  if (k < 0 || k >= pending.count) return undefined;
  let outcome = STAND_INS.get(pending.status);
  if (outcome === undefined) {
    outcome = Object.freeze({ status: pending.status, newAssetSku: null, needsArtworkToBeUploaded: null, errors: NO_ERRORS as ReportError[] });
    STAND_INS.set(pending.status, outcome);
  }
  return outcome;
}
