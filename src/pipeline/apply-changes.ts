import type { ApiClient } from '../api/client.js';
import { ApiError, isNotFound } from '../api/errors.js';
import type { JobDto, PatchJobDto } from '../api/types.js';
import type { LedgerEntry, LedgerPatchable, LedgerStore, LockGuard } from '../storage/ledger/model.js';
import { type Clock, nowIso } from '../core/clock.js';
import type { Logger } from '../core/log/logger.js';
import type { Diagnostic, ManifestJob, SourceMap } from '../manifest/model.js';
import { errorText } from './api-diagnostics.js';

/**
 * Declarative changes to an already-submitted job. The manifest is the desired
 * state: `cancel: true` cancels the job; an edited description, orderComment, mustDate or
 * dateDue becomes a PATCH. The job's flags (`isCancelable`, `permissions.canEdit`) are read
 * from `GET /Jobs/{n}` each time, never inferred from a status or an earlier answer (spec,
 * editability rule 3). PATCH and cancel are sent at most once per run and never retried.
 *
 * What counts as an edit: a manifest value that differs from the value recorded in the ledger
 * when it was last sent (`entry.patchable`) AND from the job's current value. So a change made
 * in the dashboard is not undone by re-running an unchanged manifest, and a due date the
 * factory moved later (a request earlier than possible) is not sent again. An order found on the
 * account by a ledger that never sent it gets the manifest's values as its baseline
 * (submit-job.ts, searchUnseen). An entry without a baseline (an older htorder's) compares with
 * the job's current values only.
 */

/**
 * `orderNumber` is patchable in the API but not here: it is the order's identity (the ledger
 * key, and what settle-by-search looks for), so a different orderNumber in the manifest is a
 * different order. Renaming is done in the dashboard or with `htorder api PATCH` (docs).
 */
export const PATCHABLE_FIELDS = ['description', 'orderComment', 'mustDate', 'dateDue'] as const;
export type PatchableField = (typeof PATCHABLE_FIELDS)[number];

export interface FieldChange {
  /** The manifest's field name. */
  field: PatchableField;
  /** The PATCH body's field name (`orderComment` → `comments`). */
  apiField: 'description' | 'comments' | 'mustDate' | 'dateDue';
  /** The job's current value. */
  from: string | boolean | null;
  to: string | boolean;
}

export type ChangeState =
  /** Nothing asked for or nothing differs: no call was needed beyond the read. */
  | 'none'
  /** plan: what run would send. */
  | 'planned'
  | 'applied'
  /** The API (or the job's flags) said no; nothing changed. */
  | 'refused'
  /** Sent, but the outcome is unknown (timeout, reset, 5xx) or the API could not be reached. */
  | 'unavailable';

export interface ChangeOutcome {
  state: ChangeState;
  cancel: boolean;
  changes: FieldChange[];
  diagnostics: Diagnostic[];
}

export interface ChangeContext {
  mode: 'plan' | 'run';
  client: ApiClient;
  ledger: LedgerStore;
  logger: Logger;
  /** Where the job is in the manifest, for the diagnostics' locations. */
  jobIndex: number;
  sources: SourceMap;
  /** The calendar clock of the ledger's cancel timestamps. */
  clock: Clock;
  /** run: asked right before a PATCH or cancel is sent; a reason not to send it (the input changed). */
  beforeSend?: () => Promise<string | undefined>;
}

/** The manifest's values of the patchable fields that are present (the ledger baseline). */
export function patchableOf(job: ManifestJob): LedgerPatchable {
  const out: LedgerPatchable = {};
  for (const f of PATCHABLE_FIELDS) {
    const v = job[f];
    if (v !== undefined && v !== null) (out as Record<string, unknown>)[f] = v;
  }
  return out;
}

/** True when the manifest asks for anything that needs the job read at all. */
export function wantsChanges(job: ManifestJob, entry: LedgerEntry): boolean {
  if (job.cancel === true) return entry.cancelledAt === undefined;
  const desired = patchableOf(job);
  const baseline = entry.patchable;
  if (!baseline) return Object.keys(desired).length > 0;
  return PATCHABLE_FIELDS.some((f) => {
    const to = desired[f];
    return to !== undefined && !same(f, to, baseline[f]);
  });
}

/**
 * Pure: the fields to PATCH. A field changes when the manifest has it, it differs from the
 * baseline (when there is one) and from the job's current value.
 */
export function diffChanges(job: ManifestJob, baseline: LedgerPatchable | undefined, current: JobDto): FieldChange[] {
  const desired = patchableOf(job);
  const out: FieldChange[] = [];
  for (const field of PATCHABLE_FIELDS) {
    const to = desired[field];
    if (to === undefined) continue;
    if (baseline && same(field, to, baseline[field])) continue;
    const apiField = field === 'orderComment' ? 'comments' : field;
    const from = current[apiField] ?? null;
    if (same(field, to, from)) continue;
    out.push({ field, apiField, from, to });
  }
  return out;
}

/** The PATCH body: only the changed fields (the API applies only non-null ones). */
export function patchBody(changes: readonly FieldChange[]): PatchJobDto {
  const body: Record<string, unknown> = {};
  for (const c of changes) body[c.apiField] = c.to;
  return body as PatchJobDto;
}

/**
 * Reads the job and, in run mode, cancels or patches it under the order's ledger lock,
 * recording the new baseline (or the cancel) in the ledger. Refusals become error
 * diagnostics; plan mode only describes what run would do (warnings).
 */
export async function applyChanges(ctx: ChangeContext, job: ManifestJob, entry: LedgerEntry): Promise<ChangeOutcome> {
  const none = outcome('none', false);
  const jobNumber = entry.jobNumber;
  if (entry.state !== 'submitted' || jobNumber === undefined) return none;
  if (job.cancel === true && entry.cancelledAt !== undefined) {
    const message = `job ${jobNumber} was cancelled by an earlier run (${entry.cancelledAt})`;
    return outcome('none', true, [note(ctx, 'cancel', 'changes.cancelled', message)]);
  }
  if (!wantsChanges(job, entry)) return none;
  if (ctx.mode === 'plan') return planChanges(ctx, job, entry, jobNumber);
  const key = { account: entry.account, orderNumber: entry.orderNumber };
  return ctx.ledger.withLock(key, async (guard) => {
    // Re-read under the lock: another process may have applied the same change meanwhile.
    const fresh = (await ctx.ledger.read(key, { guard })) ?? entry;
    if (!wantsChanges(job, fresh)) return none;
    // The ledger never forgets a submitted order's job number; the first read had it.
    const read = await readJob(ctx, fresh.jobNumber ?? jobNumber);
    if ('outcome' in read) return read.outcome;
    guard.assertHeld();
    return job.cancel === true ? cancel(ctx, guard, fresh, read.job) : patch(ctx, guard, job, fresh, read.job);
  });
}

async function planChanges(
  ctx: ChangeContext,
  job: ManifestJob,
  entry: LedgerEntry,
  jobNumber: number,
): Promise<ChangeOutcome> {
  const read = await readJob(ctx, jobNumber);
  if ('outcome' in read) return read.outcome;
  const current = read.job;
  const n = current.jobNumber;
  const d: Diagnostic[] = [];
  if (job.cancel === true) {
    d.push(note(ctx, 'cancel', 'changes.planned', `run would cancel job ${n} (now ${status(current)})`));
    if (!current.isCancelable && entry.cancelRequestedAt === undefined) {
      const message = `job ${n} cannot be cancelled now (${status(current)}): ${CANCEL_ADVICE}`;
      d.push(note(ctx, 'cancel', 'changes.will-be-refused', message));
    }
    return outcome('planned', true, d);
  }
  const changes = diffChanges(job, entry.patchable, current);
  for (const c of changes) d.push(note(ctx, c.field, 'changes.planned', `run would change ${describe(c)} on job ${n}`));
  if (changes.length > 0 && current.permissions?.canEdit === false) {
    const message = `job ${n} is locked for editing: ${current.permissions.lockedReason ?? 'no reason given'}`;
    d.push(note(ctx, changes[0].field, 'changes.will-be-refused', message));
  }
  return outcome(changes.length ? 'planned' : 'none', false, d, changes);
}

const CANCEL_ADVICE = 'it has entered production or its status does not allow cancelling; contact the account manager';

async function cancel(
  ctx: ChangeContext,
  guard: LockGuard,
  entry: LedgerEntry,
  current: JobDto,
): Promise<ChangeOutcome> {
  const n = current.jobNumber;
  // A cancel sent by an earlier run whose answer was lost may have worked, and then the job
  // reads isCancelable false. Cancelling an already-cancelled job answers 204 again (spec), so
  // sending once more is how that earlier outcome is learnt; otherwise the flag decides.
  if (!current.isCancelable && entry.cancelRequestedAt === undefined) {
    const message = `job ${n} cannot be cancelled (${status(current)}): ${CANCEL_ADVICE}; nothing was sent`;
    return outcome('refused', true, [error(ctx, 'cancel', 'changes.not-cancelable', message)]);
  }
  const stop = await withdrawn(ctx, 'cancel', true);
  if (stop) return stop;
  const now = nowIso(ctx.clock);
  await ctx.ledger.write({ ...entry, cancelRequestedAt: entry.cancelRequestedAt ?? now }, { guard });
  try {
    await ctx.client.jobs.cancel(n);
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) {
      // Nothing happened: forget the request so later runs read the flag again.
      const { cancelRequestedAt: _r, ...rest } = entry;
      await ctx.ledger.write(rest, { guard });
      const message = `job ${n} was not cancelled (409): ${CANCEL_ADVICE}`;
      return outcome('refused', true, [error(ctx, 'cancel', 'changes.not-cancelable', message)]);
    }
    return outcome('unavailable', true, [failure(ctx, 'cancel', `cancel of job ${n}`, err)]);
  }
  await ctx.ledger.write(
    { ...entry, cancelRequestedAt: entry.cancelRequestedAt ?? now, cancelledAt: nowIso(ctx.clock) },
    { guard },
  );
  ctx.logger.info({ orderNumber: entry.orderNumber, jobNumber: n }, 'job cancelled');
  return outcome('applied', true, [note(ctx, 'cancel', 'changes.cancelled', `job ${n} cancelled`)]);
}

async function patch(
  ctx: ChangeContext,
  guard: LockGuard,
  job: ManifestJob,
  entry: LedgerEntry,
  current: JobDto,
): Promise<ChangeOutcome> {
  const n = current.jobNumber;
  const changes = diffChanges(job, entry.patchable, current);
  const baseline = { ...entry.patchable, ...patchableOf(job) };
  if (changes.length === 0) {
    // Already as the manifest says (changed in the dashboard, or by a run whose answer was
    // lost): adopt the manifest's values as the baseline, nothing to send.
    await ctx.ledger.write({ ...entry, patchable: baseline }, { guard });
    return outcome('none', false, [], changes);
  }
  const result = (state: ChangeState, diagnostics: Diagnostic[]) => outcome(state, false, diagnostics, changes);
  const field = changes[0].field;
  if (current.permissions?.canEdit === false) {
    const reason = current.permissions.lockedReason ?? 'no reason given';
    const message = `job ${n} is locked for editing: ${reason}; not changed: ${changes.map(describe).join('; ')}`;
    return result('refused', [error(ctx, field, 'changes.locked', message)]);
  }
  const stop = await withdrawn(ctx, field, false);
  if (stop) return stop;
  try {
    await ctx.client.jobs.patch(n, patchBody(changes));
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) {
      const reason = lockedReasonOf(err) ?? err.detail ?? 'the job is locked for editing';
      return result('refused', [error(ctx, field, 'changes.locked', `job ${n} was not changed (403): ${reason}`)]);
    }
    if (err instanceof ApiError && err.status === 400) {
      return result('refused', [error(ctx, field, 'changes.rejected', `job ${n} was not changed: ${err.message}`)]);
    }
    return result('unavailable', [failure(ctx, field, `change of job ${n}`, err)]);
  }
  await ctx.ledger.write({ ...entry, patchable: baseline }, { guard });
  const fields = changes.map((c) => c.apiField);
  ctx.logger.info({ orderNumber: entry.orderNumber, jobNumber: n, fields }, 'job changed');
  return result(
    'applied',
    changes.map((c) => note(ctx, c.field, 'changes.applied', `changed ${describe(c)} on job ${n}`)),
  );
}

/** Nothing sent because the input must not be acted on (ChangeContext.beforeSend): why, as an error. */
async function withdrawn(ctx: ChangeContext, field: string, cancel: boolean): Promise<ChangeOutcome | undefined> {
  const why = await ctx.beforeSend?.();
  if (why === undefined) return undefined;
  return outcome('refused', cancel, [error(ctx, field, 'run.input-changed', `not sent: ${why}`)]);
}

/** GET /Jobs/{n}: the flags are read fresh every time. */
async function readJob(ctx: ChangeContext, jobNumber: number): Promise<{ job: JobDto } | { outcome: ChangeOutcome }> {
  try {
    return { job: await ctx.client.jobs.get(jobNumber) };
  } catch (err) {
    const field = 'orderNumber';
    if (isNotFound(err)) {
      const message =
        `job ${jobNumber} (recorded in the ledger for this order) was not found on this account; ` +
        'nothing was changed';
      return { outcome: outcome('refused', false, [error(ctx, field, 'changes.job-not-found', message)]) };
    }
    return { outcome: outcome('unavailable', false, [failure(ctx, field, `reading job ${jobNumber}`, err)]) };
  }
}

/** A failure that is not the job's fault (unreachable, credentials, 5xx, timeout): the outcome is `unavailable`. */
function failure(ctx: ChangeContext, field: string, what: string, err: unknown): Diagnostic {
  const text = errorText(err);
  const maybe = err instanceof ApiError && err.mayHaveReachedServer && err.method !== 'GET';
  ctx.logger.warn({ err: text }, `${what} failed`);
  const message =
    `${what} failed${maybe ? ' and may or may not have been applied' : ''}: ${text}; ` +
    'run again later (it is read back first, never resent blindly)';
  return error(ctx, field, 'changes.unavailable', message);
}

function outcome(
  state: ChangeState,
  cancel: boolean,
  diagnostics: Diagnostic[] = [],
  changes: FieldChange[] = [],
): ChangeOutcome {
  return { state, cancel, changes, diagnostics };
}

function lockedReasonOf(err: ApiError): string | null {
  const b = err.body;
  if (typeof b === 'object' && b !== null && typeof (b as { lockedReason?: unknown }).lockedReason === 'string') {
    return (b as { lockedReason: string }).lockedReason;
  }
  return null;
}

function same(field: PatchableField, a: string | boolean, b: string | boolean | null | undefined): boolean {
  if (b === undefined || b === null) return false;
  // The API answers dateDue with a time of day (`2026-12-04T00:00:00`); the manifest has the day.
  if (field === 'dateDue' && typeof a === 'string' && typeof b === 'string') return a.slice(0, 10) === b.slice(0, 10);
  return a === b;
}

function describe(c: FieldChange): string {
  return `${c.field} from ${JSON.stringify(c.from)} to ${JSON.stringify(c.to)}`;
}

function status(job: JobDto): string {
  return job.jobStatus ? `status ${JSON.stringify(job.jobStatus)}` : 'status unknown';
}

function note(ctx: ChangeContext, field: string, code: string, message: string): Diagnostic {
  return diag(ctx, 'warning', field, code, message);
}

function error(ctx: ChangeContext, field: string, code: string, message: string): Diagnostic {
  return diag(ctx, 'error', field, code, message);
}

function diag(
  ctx: ChangeContext,
  severity: Diagnostic['severity'],
  field: string,
  code: string,
  message: string,
): Diagnostic {
  const path = `jobs[${ctx.jobIndex}].${field}`;
  return { severity, code, message, field: path, source: ctx.sources.locate(path) };
}

export interface LedgerView {
  /** jobHash of the manifest entry. */
  hash: string;
  /**
   * The order's `submitted` entry as the ledger look-up found it (the job is reported
   * already-submitted), or undefined: the look-up found it not submitted. Read without the
   * lock, as the look-up reads; a change is decided on the entry read again under the lock.
   */
  submitted: LedgerEntry | undefined;
}

/**
 * The pipeline's entry point, right after the ledger look-up, on what it read. run: applies
 * the changes of an already-submitted order whose other fields are unchanged (a change of
 * anything else is reported as `ledger.changed-after-submit` and nothing is sent). plan:
 * describes what run would do. Both: `cancel: true` on an order that was never submitted is
 * an error, so run never creates a job only to be asked to cancel it.
 */
export async function declarativeChanges(
  ctx: ChangeContext,
  job: ManifestJob,
  view: LedgerView,
): Promise<ChangeOutcome> {
  const none = outcome('none', false);
  const entry = view.submitted;
  if (entry?.state !== 'submitted') {
    if (job.cancel !== true) return none;
    const message =
      `cancel: true, but order ${JSON.stringify(job.orderNumber)} has not been submitted from this state dir: ` +
      'nothing to cancel, and it is not submitted';
    return outcome('refused', true, [error(ctx, 'cancel', 'changes.cancel-unsubmitted', message)]);
  }
  if (entry.payloadHash !== view.hash) {
    // run has already filed ledger.changed-after-submit; plan says what run will do.
    if (ctx.mode === 'run') return none;
    const message =
      `already submitted as job ${entry.jobNumber ?? '?'}, and fields other than ${PATCHABLE_FIELDS.join(', ')} ` +
      'or cancel have changed since: run will report this and send nothing';
    return outcome('none', false, [note(ctx, 'orderNumber', 'changes.not-sent', message)]);
  }
  return applyChanges(ctx, job, entry);
}
