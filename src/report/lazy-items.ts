/**
 * Item results made on first use. Memory (`npm run bench:check`, its peak RSS): a big manifest
 * would otherwise hold an ItemResult object per item that `check` only writes out once; yet the
 * pipeline mutates item results (statuses, new asset SKUs), so they must also be ordinary
 * objects when used.
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
import { JOB_STATUSES, type ItemResult, type JobResult, type JobStatus, type ReportError } from './model.js';

/** Where one report's pending items come from: job `j`'s item `k`, and how many job `j` has. */
export interface ItemSource {
  count(j: number): number;
  build(j: number, k: number, status: JobStatus): ItemResult;
}

export interface PendingItems {
  /** How many items the job has. */
  count: number;
  /** Every item's status (the job's status when the report was built, or as refilePending filed it). */
  status: JobStatus;
  /** Every item's needsArtworkToBeUploaded: null until the API answered for the job's lines (refilePending). */
  needsArtwork: false | null;
  /** Builds item k. */
  build(k: number, status: JobStatus): ItemResult;
}

/** What one report's deferred jobs share: the source, each job's status, and whether the API answered for its lines. */
interface Context {
  source: ItemSource;
  statuses: Uint8Array;
  answered: Uint8Array;
}

const CONTEXT = Symbol('htorder.itemContext');
type Getter = ((this: JobResult) => ItemResult[]) & { [CONTEXT]?: Context };
const STATUS_CODE: ReadonlyMap<JobStatus, number> = new Map(JOB_STATUSES.map((s, i) => [s, i]));

/**
 * A function that adds `items` to a job (after its other keys, where the report model has
 * it), built on first access from `source` for job `job.index`.
 *
 * Nothing is stored per job: the accessor pair is one per report (so every job shares one
 * hidden class, the getter and setter living in it, not in the object), and it finds its
 * report through the getter. Materialising turns the accessor (the last property) into a data
 * property, which keeps the object in V8's fast mode.
 */
export function itemDeferrer(source: ItemSource, jobCount: number): (job: Omit<JobResult, 'items'>) => JobResult {
  const context: Context = { source, statuses: new Uint8Array(jobCount), answered: new Uint8Array(jobCount) };
  const get: Getter = function (this: JobResult): ItemResult[] {
    const items = buildAll(pendingIn(context, this));
    assign.call(this, items);
    return items;
  };
  get[CONTEXT] = context;
  return (job) => {
    context.statuses[job.index] = STATUS_CODE.get(job.status) ?? 0;
    // A job made again (a report rendering it on demand) starts as check left it.
    context.answered[job.index] = 0;
    Object.defineProperty(job, 'items', { get, set: assign, enumerable: true, configurable: true });
    return job as JobResult;
  };
}

function pendingIn(context: Context, job: JobResult): PendingItems {
  const j = job.index;
  const needsArtwork = context.answered[j] === 1 ? false : null;
  return {
    count: context.source.count(j),
    status: JOB_STATUSES[context.statuses[j]],
    needsArtwork,
    build: (k, status) => {
      const item = context.source.build(j, k, status);
      if (needsArtwork !== null) item.needsArtworkToBeUploaded = needsArtwork;
      return item;
    },
  };
}

/** The API's answer for one line of a submitted job. */
export interface LineAnswer {
  newAssetSku: string | null;
  needsArtworkToBeUploaded: boolean;
}

/**
 * Files a job's items, still pending, under `status` with the API's answer for each line
 * (`lines[k]`; none for a line it did not answer), without building them — when every item
 * takes the same answer and a pending item can carry it: no new asset SKU, no artwork awaited.
 * A run of many jobs then holds no item objects for its submitted jobs. False (nothing
 * changed) when the items are built already or the answers differ: the caller writes them.
 */
export function refilePending(job: JobResult, status: JobStatus, lines: readonly LineAnswer[] | undefined): boolean {
  const get = Object.getOwnPropertyDescriptor(job, 'items')?.get as Getter | undefined;
  const context = get?.[CONTEXT];
  if (context === undefined) return false;
  const count = context.source.count(job.index);
  const answered = lines !== undefined && lines.length > 0;
  for (let k = 0; k < count; k++) {
    const line = lines?.[k];
    if (line === undefined ? answered : line.newAssetSku !== null || line.needsArtworkToBeUploaded !== false)
      return false;
  }
  context.statuses[job.index] = STATUS_CODE.get(status) ?? 0;
  context.answered[job.index] = answered ? 1 : 0;
  return true;
}

function assign(this: JobResult, items: ItemResult[]): void {
  Object.defineProperty(this, 'items', { value: items, enumerable: true, configurable: true, writable: true });
}

function buildAll(p: PendingItems): ItemResult[] {
  const items = new Array<ItemResult>(p.count);
  for (let k = 0; k < p.count; k++) items[k] = p.build(k, p.status);
  return items;
}

function pendingOf(job: JobResult): PendingItems | undefined {
  const get = Object.getOwnPropertyDescriptor(job, 'items')?.get as Getter | undefined;
  const context = get?.[CONTEXT];
  return context === undefined ? undefined : pendingIn(context, job);
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
const STAND_INS = new Map<string, ItemOutcome>();

/** Item `k`'s outcome for every `k` of one job (whether its items are built is looked up once). */
export function itemOutcomes(job: JobResult): (k: number) => ItemOutcome | undefined {
  const pending = pendingOf(job);
  if (pending === undefined) return (k) => job.items[k];
  const { count, status, needsArtwork } = pending;
  const key = `${status}:${needsArtwork}`;
  let outcome = STAND_INS.get(key);
  if (outcome === undefined) {
    outcome = Object.freeze({
      status,
      newAssetSku: null,
      needsArtworkToBeUploaded: needsArtwork,
      errors: NO_ERRORS as ReportError[],
    });
    STAND_INS.set(key, outcome);
  }
  const shared = outcome;
  return (k) => (k >= 0 && k < count ? shared : undefined);
}
