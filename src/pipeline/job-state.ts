import type { LedgerEntry } from '../storage/ledger/model.js';
import { extend } from '../core/extend.js';
import { invalidJobs } from '../manifest/diagnostics.js';
import type { Diagnostic, JobFindings, JobList, Manifest, ManifestJob } from '../manifest/model.js';
import type { ResolvedJob } from '../resolve/resolve-job.js';
import type { Approval, HoldReason } from './guard-notes.js';
import { jobHash } from './job-hash.js';
import { JobTable, type KeptEstimate, NO_FINDINGS, type Parking } from './job-table.js';

/**
 * One job's way through the pipeline, held by the pipeline (the report is only written from
 * it). Every stage is a function from a JobState to the next one (stages/*.ts); `outcome` says
 * where the job stands, and job-status.ts alone turns that into the status the report shows.
 */

/** Where a job stands after the stages it went through. */
export const STAGE_OUTCOMES = [
  /** Passed check: waits for the ledger look-up and resolution. */
  'checked',
  /** Resolved, preflighted, estimated and dry-run without an error: may be submitted. */
  'ready',
  /** Check, the catalogue, preflight, a declarative change or the API's dry run refused it. */
  'refused',
  /** Ready, but over a limit or a suspected duplicate: not sent until approved (docs/guardrails.md). */
  'awaiting-approval',
  /** Ready, but another job of the manifest was not (all or nothing, without --partial). */
  'held-back',
  /** Created by this run. */
  'created',
  /** Created before: the ledger records it (or a search found the job an earlier run left in doubt). */
  'found',
  /** Not created: the API refused the create, or a search proved nothing exists. */
  'not-created',
  /** May or may not have been created, and the search that would tell could not be made. */
  'unknown',
  /** The API, the credentials or the disk failed while it was processed: nothing was decided. */
  'not-processed',
] as const;

export type StageOutcome = (typeof STAGE_OUTCOMES)[number];

interface JobFacts {
  /** The job's place in the manifest (`jobs[index]`). */
  readonly index: number;
  readonly orderNumber: string;
  /** jobHash of the manifest entry: the fingerprint the ledger keeps. */
  readonly hash: string;
  /** What the stages found (errors and warnings), in the order found; check's own are in the report. */
  readonly diagnostics: readonly Diagnostic[];
  /** What the ledger look-up or the submit learnt about the order; the job's items show this outcome. */
  readonly ledger?: LedgerFinding;
  /**
   * The resolution, once made (kept when it was refused: the report shows its estimate); once
   * the plan stages are done, only what is read of it later (KeptResolution).
   */
  readonly resolved?: Resolution;
  /** The API could not be reached or refused the credentials while this job was processed. */
  readonly unavailable: boolean;
  /** The approval this job's fingerprint has: the guardrails let it through. */
  readonly approval?: Approval;
  /** `awaiting-approval`: why (the approval note records them). */
  readonly holdReasons?: readonly HoldReason[];
}

export interface LedgerFinding {
  readonly outcome: StageOutcome;
  readonly entry?: LedgerEntry;
  /** The account's currency, for a job reported from the ledger without a resolution of its own. */
  readonly currency?: string;
}

/**
 * What a job keeps of its resolution from the end of its plan stages: what the guardrails,
 * apply's check, the report and the saved plan read of it, and the fingerprint of the request
 * its dry run validated. The request itself (most of a job's memory in a run of many jobs) is
 * resolved again right before it is sent (stages/resolve.ts, resolveAgain).
 */
export interface KeptResolution {
  readonly kept: true;
  readonly orderNumber: string;
  readonly jobIndex: number;
  /** requestHash (saved-plan.ts) of the request. */
  readonly request: string;
  /** contentKey (guard-notes.ts) of the request: the submit's content index entry is not computed again. */
  readonly content: string;
  readonly estimate: KeptEstimate;
  readonly dateDue?: string | null;
}

export type Resolution = ResolvedJob | KeptResolution;

/** A job that is `ready` always carries the resolution its submit sends (or keeps its fingerprint until then). */
export type JobState = JobFacts &
  ({ readonly outcome: 'ready'; readonly resolved: Resolution } | { readonly outcome: Exclude<StageOutcome, 'ready'> });

/** Check's verdict on every job of the manifest: the first state of each. */
export function checkedJobs(
  manifest: Manifest<JobList>,
  diagnostics: readonly Diagnostic[],
  jobFindings?: JobFindings,
): JobState[] {
  // A diagnostic not tied to one job (syntax, `version`, `defaults`) fails every job: a manifest is all or nothing.
  const { all, jobs: refused } = invalidJobs(diagnostics);
  // Hashed when first asked (the ledger look-up): the first jobs' lookups and dry runs are not
  // kept waiting for every job's hash. One getter serves every job of the input (a getter made
  // per job gives each job's state a hidden class of its own, several hundred bytes a job); the
  // fingerprint is kept in the input's JobTable.
  // A windowed CSV's order numbers are its index's: its jobs are not read again to name them.
  const named = manifest.jobs.orderNumbers;
  const table = new JobTable(
    manifest.jobs.length,
    (index) => {
      const job = manifest.jobs.at(index);
      if (job === undefined) throw new Error(`no job ${index} in ${manifest.file}`);
      return jobHash(job);
    },
    named,
  );
  const keys = stateKeys(table);
  tables.set(manifest, keys);
  // One field a job (its index); its other keys are getters, a checked and a refused state each of a hidden class of their own.
  const states = new Array<JobState>(manifest.jobs.length);
  for (let index = 0; index < states.length; index++) {
    const job = named === undefined ? (manifest.jobs.at(index) as ManifestJob) : undefined;
    // A mapped row may have no order number (a blank cell): check has refused that job already.
    if (typeof job?.orderNumber === 'string') table.setOrderNumber(index, job.orderNumber);
    states[index] =
      all || refused.has(index) || jobFindings?.refuses(index) === true
        ? (Object.defineProperties(keys.refusedJob(index), keys.refused) as unknown as JobState)
        : (Object.defineProperties(keys.checkedJob(index), keys.checked) as unknown as JobState);
  }
  return states;
}

/** The keys a job's state reads from its input's JobTable, one getter each for every job of the input. */
interface TableKeys {
  readonly table: JobTable;
  readonly hash: PropertyDescriptor;
  readonly checked: PropertyDescriptorMap;
  readonly refused: PropertyDescriptorMap;
  readonly parked: PropertyDescriptorMap;
  /** A state's one field, of a hidden class of this input's own (stateMaker). */
  readonly checkedJob: (index: number) => Keyed;
  readonly refusedJob: (index: number) => Keyed;
  readonly parkedJob: (index: number) => Keyed;
}

interface Keyed {
  index: number;
  /** A getter: the table's column. */
  readonly orderNumber: string;
}

const tables = new WeakMap<Manifest<JobList>, TableKeys>();

function stateKeys(table: JobTable): TableKeys {
  const key = (get: (this: Keyed) => unknown): PropertyDescriptor => ({ get, enumerable: true, configurable: true });
  const hash = key(function (this) {
    return table.hash(this.index);
  });
  const orderNumber = key(function (this) {
    return table.orderNumber(this.index);
  });
  return {
    table,
    hash,
    checked: { orderNumber, hash, outcome: constant('checked'), diagnostics: NONE, unavailable: AVAILABLE },
    refused: { orderNumber, hash, outcome: constant('refused'), diagnostics: NONE, unavailable: AVAILABLE },
    // In the order of a state's keys; the resolution is made anew at each read, from the columns.
    parked: {
      orderNumber,
      hash,
      outcome: READY,
      diagnostics: key(function (this) {
        return table.findingsOf(this.index);
      }),
      unavailable: AVAILABLE,
      resolved: key(function (this) {
        return keptResolution(this.orderNumber, this.index, table.parked(this.index));
      }),
    },
    checkedJob: stateMaker(),
    refusedJob: stateMaker(),
    parkedJob: stateMaker(),
  };
}

/**
 * Plain objects `{index, orderNumber}` (their prototype Object.prototype) whose hidden class
 * is this maker's own. Every input's states get their `hash` getter from their own JobTable:
 * had they one hidden class to begin with, as object literals do, the second input's getter
 * would turn each of its states into a dictionary (V8 keeps one accessor per transition), and
 * a constructor's objects are sized to the fields they get, where `{}` reserves four.
 */
function stateMaker(): (index: number) => Keyed {
  function State(this: { index: number }, index: number) {
    this.index = index;
  }
  State.prototype = Object.prototype;
  const Made = State as unknown as new (index: number) => Keyed;
  return (index) => new Made(index);
}

/** A key whose getter always says `value`. */
function constant(value: unknown): PropertyDescriptor {
  return { get: () => value, enumerable: true, configurable: true };
}

const READY = constant('ready');
const AVAILABLE = constant(false);
const NONE = constant(NO_FINDINGS);

/**
 * A ready job's state once its plan stages are done, its resolution kept (`kept`) in its
 * input's JobTable: an object of one field (the job's index), whose other
 * keys read the table. A job that is not ready, has a ledger finding, an approval or hold
 * reasons, or whose input has no table, is kept as it is (undefined).
 */
export function parkedJob(job: JobState, manifest: Manifest<JobList>, kept: Parking): JobState | undefined {
  const keys = tables.get(manifest);
  if (keys === undefined || job.outcome !== 'ready' || job.unavailable) return undefined;
  if (job.ledger !== undefined || job.approval !== undefined || job.holdReasons !== undefined) return undefined;
  // Its order number is read from the table: a job whose own is not the table's is kept as it is.
  if (keys.table.orderNumber(job.index) !== job.orderNumber) return undefined;
  if (!keys.table.park(job.index, kept, job.diagnostics)) return undefined;
  return Object.defineProperties(keys.parkedJob(job.index), keys.parked) as unknown as JobState;
}

/** Job `index`'s order number as check read it, from `manifest`'s table (none before checkedJobs). */
export function orderNumbersOf(manifest: Manifest<JobList>): ((index: number) => string | undefined) | undefined {
  const table = tables.get(manifest)?.table;
  return table === undefined ? undefined : (index) => table.orderNumber(index);
}

/** A KeptResolution of what a job keeps of its resolution. */
export function keptResolution(orderNumber: string, jobIndex: number, kept: Parking): KeptResolution {
  const { request, content, estimate, dateDue } = kept;
  const resolution = { kept: true as const, orderNumber, jobIndex, request, content, estimate };
  return dateDue === undefined ? resolution : extend(resolution, { dateDue });
}

/** The job with more findings, after the ones it had. */
export function withFindings(job: JobState, diagnostics: readonly Diagnostic[]): JobState {
  return diagnostics.length === 0 ? job : extend(job, { diagnostics: [...job.diagnostics, ...diagnostics] });
}

/** The whole resolution of a job in its plan stages, which run before anything of it is kept. */
export function fullResolution(job: { readonly orderNumber: string; readonly resolved: Resolution }): ResolvedJob {
  if ('kept' in job.resolved)
    throw new Error(`order ${JSON.stringify(job.orderNumber)}: its request is no longer held`);
  return job.resolved;
}

/** A resolution's due date, whether whole or kept. */
export function dueOf(resolved: Resolution): string | null | undefined {
  return 'kept' in resolved ? resolved.dateDue : resolved.candidate.dateDue;
}
