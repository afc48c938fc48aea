import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import type { ActiveJobDto, JobCandidate, JobCreateResponse } from '../api/types.js';
import type {
  LedgerEntry,
  LedgerKey,
  LedgerLine,
  LedgerPatchable,
  LedgerStore,
  LockGuard,
} from '../storage/ledger/model.js';
import { type Clock, nowIso } from '../core/clock.js';
import type { Logger } from '../core/log/logger.js';
import { errorText, isRefusal } from './api-diagnostics.js';
import { type AccountListing, findSubmitted, listedJobs, type OrderJobs } from './find-submitted.js';

export type SubmitStatus = 'submitted' | 'already-submitted' | 'failed' | 'in-doubt';

export interface SubmitOutcome {
  status: SubmitStatus;
  entry?: LedgerEntry;
  /** The manifest entry differs from the one submitted: reported, never resent. */
  changedAfterSubmit?: boolean;
  /** Why it failed or is in doubt (the API's error when there was one). */
  error?: unknown;
  /** The API could not be reached or refused the credentials: nothing was decided. */
  unavailable?: boolean;
  /**
   * In doubt because the account holds no job with the order number but these, whose order
   * numbers differ from it only as the API may have changed it (heldForLookalikes).
   */
  lookalikes?: readonly ActiveJobDto[];
}

export interface SubmitContext {
  client: ApiClient;
  ledger: LedgerStore;
  /** Ledger account key: region + account id (ledger/account-key.ts). */
  account: string;
  /**
   * The ledger cannot vouch for orders it has never seen (new or moved state dir, another
   * machine, HTORDER_VERIFY_NEW_ORDERS=always): each is searched on the account before its
   * first create, and a job found is recorded as submitted instead of being sent again.
   */
  verifyUnseen?: boolean;
  /** Orders this run searched and did not find, or found in the ledger (so submit does not search them again). */
  verifiedAbsent?: Set<string>;
  /**
   * The account's jobs, listed once for this input's unseen orders (find-submitted.ts,
   * listAccount): an order it lists is found without a search; when complete, an order it does
   * not list is absent without one.
   */
  listing?: AccountListing;
  input: { file: string; sha256: string };
  logger: Logger;
  /** The calendar clock of the ledger's timestamps (intentAt, outcomeAt); waits between sends use real time. */
  clock: Clock;
}

/** POSTs per job per run, each one only after a search proved the previous one created nothing. */
const MAX_SENDS = 3;

export interface SubmitRequest {
  orderNumber: string;
  /** Fingerprint of the manifest entry (jobHash). */
  hash: string;
  candidate: JobCandidate;
  /** The manifest's patchable fields, recorded with the entry as the baseline of later changes. */
  patchable?: LedgerPatchable;
}

/** A `submitted` entry: the order is reported already-submitted (and whether it changed since), never sent. */
export function alreadySubmitted(entry: LedgerEntry | undefined, hash: string): SubmitOutcome | undefined {
  if (entry?.state !== 'submitted') return undefined;
  return { status: 'already-submitted', entry, changedAfterSubmit: entry.payloadHash !== hash };
}

/**
 * Settles an order left `intent` by an earlier run (crash, timeout) without sending: if the
 * search finds it, it is recorded as submitted. Used before resolving an in-doubt order, so
 * an order that already exists is never re-validated or re-sent. `peeked`: the entry as the
 * look-up read it without the lock (a hint; it is read again under the lock).
 */
export async function settleInDoubt(
  ctx: SubmitContext,
  orderNumber: string,
  hash: string,
  peeked: LedgerEntry | undefined,
): Promise<SubmitOutcome | undefined> {
  if (peeked?.state !== 'intent') return undefined;
  const key = { account: ctx.account, orderNumber };
  return ctx.ledger.withLock(key, async (guard) => {
    const entry = await ctx.ledger.read(key, { guard });
    if (entry?.state !== 'intent') return alreadySubmitted(entry, hash);
    const settled = await settleEarlier(ctx, guard, entry, hash);
    return settled.status === 'failed' ? undefined : settled;
  });
}

/**
 * For a ledger that cannot vouch for the account: an order it has no entry for is searched on
 * the account (the settle search) before anything is spent on it. Found → recorded as
 * submitted and reported `already-submitted`; not found → remembered for this run, so submit
 * sends it without searching again; search impossible → the job is not processed (the API is
 * unavailable; nothing was sent). Undefined when there is nothing to report. `patchable` gives
 * the manifest's patchable fields, recorded as the baseline of a job found (searchUnseen).
 */
export async function verifyUnseen(
  ctx: SubmitContext,
  orderNumber: string,
  hash: string,
  peeked: LedgerEntry | undefined,
  patchable: () => LedgerPatchable | undefined,
): Promise<SubmitOutcome | undefined> {
  if (!ctx.verifyUnseen || ctx.verifiedAbsent?.has(orderNumber)) return undefined;
  const key = { account: ctx.account, orderNumber };
  // An order the ledger has an entry for is not unseen: the ledger decides it as always.
  const seen = (): undefined => {
    ctx.verifiedAbsent?.add(orderNumber);
    return undefined;
  };
  if (peeked) return seen();
  return ctx.ledger.withLock(key, async (guard) => {
    const entry = await ctx.ledger.read(key, { guard });
    if (entry) return alreadySubmitted(entry, hash) ?? seen();
    return searchUnseen(ctx, guard, orderNumber, hash, patchable);
  });
}

/** The search of verifyUnseen, under the order's lock, for an order the ledger has no entry for. */
async function searchUnseen(
  ctx: SubmitContext,
  guard: LockGuard,
  orderNumber: string,
  hash: string,
  patchable: () => LedgerPatchable | undefined,
): Promise<SubmitOutcome | undefined> {
  const now = nowIso(ctx.clock);
  let jobs: OrderJobs;
  try {
    jobs = (ctx.listing && listedJobs(ctx.listing, orderNumber)) ?? (await findSubmitted(ctx.client, orderNumber));
  } catch (err) {
    ctx.logger.warn({ orderNumber, err: errorText(err) }, 'could not check the account for this order; not sent');
    return { status: 'failed', error: err, unavailable: true };
  }
  const found = jobs.exact;
  if (found.length === 0 && jobs.lookalikes.length > 0) {
    // Recorded as an intent, its outcome unknown: every later run settles it by search first,
    // even once this ledger vouches for the account and would send an order it has no entry for.
    const intent = intentEntry(ctx, orderNumber, hash, 0, now);
    await ctx.ledger.write(intent, { guard });
    return heldForLookalikes(ctx, intent, jobs.lookalikes);
  }
  if (found.length === 0) {
    ctx.verifiedAbsent?.add(orderNumber);
    return undefined;
  }
  // The same recording as a settled intent: the job exists, so it is submitted, never resent.
  // What it was sent with is unknown (another ledger sent it): the manifest's fingerprint and
  // patchable fields are taken as the baselines, so only a later edit of the manifest changes
  // the job. Compared with the job itself, a due date the factory moved, or a field changed in
  // the dashboard, would read as an edit and be sent back.
  const baseline = patchable();
  const intent = { ...intentEntry(ctx, orderNumber, hash, 0, now), ...(baseline ? { patchable: baseline } : {}) };
  const settled = await recordFound(ctx, guard, intent, found, now);
  ctx.logger.info({ orderNumber, jobNumber: settled.jobNumber }, 'order found on the account; not sent again');
  return { status: 'already-submitted', entry: settled };
}

/**
 * An order the account holds no job for under its own spelling, but a job or more whose order
 * numbers differ from it only by letter case, blanks or Unicode form: the spec does not say the
 * API keeps an order number as sent, so one of them may be this order, created by a send whose
 * answer was lost. Counted as found, a different order that happens to be spelt alike would
 * never be sent (silently dropped); counted as absent, this order could be created twice. So it
 * is in doubt: nothing is sent, its intent stays for the next run to settle, and the report
 * names the jobs and both spellings for someone to decide. Not the API unavailable: waiting does
 * not settle it.
 */
function heldForLookalikes(
  ctx: SubmitContext,
  intent: LedgerEntry,
  lookalikes: readonly ActiveJobDto[],
): SubmitOutcome {
  ctx.logger.warn(
    {
      orderNumber: intent.orderNumber,
      lookalikes: lookalikes.map((j) => ({ jobNumber: j.jobNumber, orderNumber: j.orderNumber })),
    },
    'the account holds a job whose order number differs from this one only in case, blanks or Unicode form; not sent',
  );
  return { status: 'in-doubt', entry: intent, lookalikes, unavailable: false };
}

/**
 * Submits one job exactly once (docs/architecture.md#exactly-once). Under the order's lock:
 *   1. a `submitted` entry → already-submitted, nothing sent;
 *   2. an `intent` entry (earlier outcome unknown) → settled by search before anything is sent;
 *   3. intent recorded durably, THEN `POST /Jobs`, THEN the outcome recorded.
 * A failure that may have reached the server is never resent blindly: the search runs first,
 * and only "not found" allows another POST (up to MAX_SENDS). A crash at any point leaves an
 * `intent` entry that the next run settles the same way.
 */
export async function submitJob(ctx: SubmitContext, req: SubmitRequest): Promise<SubmitOutcome> {
  const key: LedgerKey = { account: ctx.account, orderNumber: req.orderNumber };
  return ctx.ledger.withLock(key, async (guard) => {
    let entry = await ctx.ledger.read(key, { guard });
    if (entry?.state === 'intent') {
      const settled = await settleEarlier(ctx, guard, entry, req.hash);
      if (settled.status !== 'failed') return settled;
      entry = settled.entry;
    }
    const known = alreadySubmitted(entry, req.hash);
    if (known) return known;
    if (entry === undefined && ctx.verifyUnseen && !ctx.verifiedAbsent?.has(req.orderNumber)) {
      const unseen = await searchUnseen(ctx, guard, req.orderNumber, req.hash, () => req.patchable);
      if (unseen) return unseen;
    }
    return send(ctx, req, entry, guard);
  });
}

/**
 * An order whose dry run was answered with a job number (ValidateResult.created): the API may
 * have created it, though the spec says a dry run creates nothing, or may only have named a job
 * it did not make. Under the order's lock its intent is recorded, as before a create whose
 * answer is unknown, and settled by search: found, it is the order's job, never sent again;
 * not found, nothing exists and the order goes on to its create (undefined); the search
 * impossible, it stays in doubt. A crash meanwhile leaves the intent for the next run to settle.
 */
export async function settleDryRunJob(
  ctx: SubmitContext,
  req: SubmitRequest,
  named: JobCreateResponse,
): Promise<SubmitOutcome | undefined> {
  const key: LedgerKey = { account: ctx.account, orderNumber: req.orderNumber };
  ctx.logger.warn(
    { orderNumber: req.orderNumber, jobNumber: named.jobNumber },
    'a validateOnly dry run was answered with a job number; the account is searched for the order before it is sent',
  );
  return ctx.ledger.withLock(key, async (guard) => {
    const entry = await ctx.ledger.read(key, { guard });
    const known = alreadySubmitted(entry, req.hash);
    if (known) return known;
    const intent: LedgerEntry = {
      ...intentEntry(ctx, req.orderNumber, req.hash, entry?.attempts ?? 0, nowIso(ctx.clock)),
      ...(req.patchable ? { patchable: req.patchable } : {}),
    };
    await ctx.ledger.write(intent, { guard });
    const settled = await settle(ctx, guard, intent);
    return settled.status === 'failed' ? undefined : settled;
  });
}

async function send(
  ctx: SubmitContext,
  req: SubmitRequest,
  previous: LedgerEntry | undefined,
  guard: LockGuard,
): Promise<SubmitOutcome> {
  let attempts = previous?.attempts ?? 0;
  for (let send = 1; ; send++) {
    const intent: LedgerEntry = {
      ...intentEntry(ctx, req.orderNumber, req.hash, ++attempts, nowIso(ctx.clock)),
      ...(req.patchable ? { patchable: req.patchable } : {}),
    };
    await ctx.ledger.write(intent, { guard });
    guard.assertHeld();
    let response: JobCreateResponse;
    try {
      response = await ctx.client.jobs.create(req.candidate);
    } catch (err) {
      const outcome = await afterFailedCreate(ctx, guard, req, intent, err);
      if (outcome.status !== 'failed' || !outcome.resend) return outcome;
      // Proven not created, but refused before acting (429, 5xx, reset) on every send of
      // this run: the API is unavailable, the job is not wrong. Exit 3 / retry later, never
      // "invalid" (a watcher would move the file to failed/ for the user to fix).
      if (send >= MAX_SENDS) return { ...outcome, unavailable: true };
      ctx.logger.warn({ orderNumber: req.orderNumber, send }, 'job was not created; sending again');
      await sleep(outcome.resendAfterMs ?? 500 * send);
      continue;
    }
    const done: LedgerEntry = {
      ...intent,
      ...fromResponse(response),
      state: 'submitted',
      settledBy: 'response',
      outcomeAt: nowIso(ctx.clock),
    };
    // Not fsynced: if a power cut loses it, the durable intent remains and is settled by search.
    await ctx.ledger.write(done, { guard, durable: false });
    return { status: 'submitted', entry: done };
  }
}

function intentEntry(
  ctx: SubmitContext,
  orderNumber: string,
  hash: string,
  attempts: number,
  intentAt: string,
): LedgerEntry {
  return {
    ledgerVersion: 1,
    account: ctx.account,
    orderNumber,
    payloadHash: hash,
    state: 'intent',
    attempts,
    intentAt,
    input: ctx.input,
  };
}

interface FailedCreate extends SubmitOutcome {
  /** Proven not created and worth sending again in this run. */
  resend?: boolean;
  resendAfterMs?: number;
}

async function afterFailedCreate(
  ctx: SubmitContext,
  guard: LockGuard,
  req: SubmitRequest,
  intent: LedgerEntry,
  err: unknown,
): Promise<FailedCreate> {
  const api = err instanceof ApiError ? err : undefined;
  const fail = async (resend: boolean, extra: Partial<FailedCreate> = {}): Promise<FailedCreate> => {
    const outcomeAt = nowIso(ctx.clock);
    const entry: LedgerEntry = { ...intent, state: 'failed', outcomeAt, error: errorText(err) };
    await ctx.ledger.write(entry, { guard });
    return { status: 'failed', entry, error: err, resend, ...extra };
  };
  // Certainly not sent (connection refused before the request left): nothing exists.
  if (!api?.mayHaveReachedServer) return fail(false, { unavailable: true });
  // A 4xx answer means the API refused before acting: "nothing was created" (spec, Errors).
  if (api.status !== null && api.status >= 400 && api.status < 500) {
    if (api.status === 429) return fail(true, { resendAfterMs: api.retryAfterMs ?? undefined });
    return fail(false, { unavailable: api.kind === 'auth' });
  }
  // 5xx, timeout, reset after sending: the job may exist. Search before anything else.
  const settled = await settle(ctx, guard, intent);
  if (settled.status !== 'failed') return settled;
  if (api.status === 500) {
    // "On POST /Jobs a 500 usually means an invalid payload": ask validateOnly for the real messages.
    try {
      const { created } = await ctx.client.jobs.validate(req.candidate);
      // The check answered with a job number: it may have made the order; searched again before a resend.
      if (created) {
        const again = await settle(ctx, guard, intent);
        if (again.status !== 'failed') return again;
      }
    } catch (validation) {
      // Only the job's own refusal ends it; a 429 or refused credentials on the check is the API
      // unavailable, and the job is sent again like after any 5xx.
      if (isRefusal(validation, { fiveHundred: false })) return { ...settled, error: validation, resend: false };
    }
  }
  return { ...settled, error: err, resend: true, resendAfterMs: api.retryAfterMs ?? undefined };
}

/** An `intent` left by an earlier run, settled by search: a job found is reported already-submitted. */
async function settleEarlier(
  ctx: SubmitContext,
  guard: LockGuard,
  intent: LedgerEntry,
  hash: string,
): Promise<SubmitOutcome> {
  const settled = await settle(ctx, guard, intent);
  if (settled.status !== 'submitted') return settled;
  return { ...settled, status: 'already-submitted', changedAfterSubmit: intent.payloadHash !== hash };
}

/**
 * Decides an `intent` entry by search: found → submitted (line details fetched from the job),
 * not found → failed (nothing exists, safe to send again), search impossible or only
 * look-alikes found (heldForLookalikes) → in-doubt, the intent kept.
 */
async function settle(ctx: SubmitContext, guard: LockGuard, intent: LedgerEntry): Promise<SubmitOutcome> {
  let jobs: OrderJobs;
  try {
    jobs = await findSubmitted(ctx.client, intent.orderNumber);
  } catch (err) {
    const message = 'could not settle an unknown outcome; job stays in doubt';
    ctx.logger.warn({ orderNumber: intent.orderNumber, err: errorText(err) }, message);
    return { status: 'in-doubt', entry: intent, error: err, unavailable: true };
  }
  const now = nowIso(ctx.clock);
  const found = jobs.exact;
  if (found.length === 0 && jobs.lookalikes.length > 0) return heldForLookalikes(ctx, intent, jobs.lookalikes);
  if (found.length === 0) {
    const error = 'not created (confirmed by search)';
    const entry: LedgerEntry = { ...intent, state: 'failed', outcomeAt: now, error };
    await ctx.ledger.write(entry, { guard });
    return { status: 'failed', entry };
  }
  return { status: 'submitted', entry: await recordFound(ctx, guard, intent, found, now) };
}

/** Records the job a search found (oldest first) as submitted, with its lines read from the job. */
async function recordFound(
  ctx: SubmitContext,
  guard: LockGuard,
  intent: LedgerEntry,
  found: readonly ActiveJobDto[],
  now: string,
): Promise<LedgerEntry> {
  const first = found[0];
  if (!first) throw new Error('recordFound needs a job');
  let lines: LedgerLine[] | undefined;
  let totalJobCost: number | undefined;
  try {
    const job = await ctx.client.jobs.get(first.jobNumber);
    lines = job.lines.map((l) => ({
      customerReference: l.customerReference,
      quantity: l.quantity,
      newAssetSku: l.assetSku,
      needsArtworkToBeUploaded: false,
    }));
    totalJobCost = job.lines.reduce((sum, l) => sum + l.quantity * l.unitPrice, 0);
  } catch {
    // The job exists (the search said so); line details are a nicety, not a decision.
  }
  const entry: LedgerEntry = {
    ...intent,
    state: 'submitted',
    settledBy: 'search',
    outcomeAt: now,
    jobNumber: first.jobNumber,
    dateDue: first.dateDue,
    ...(totalJobCost === undefined ? {} : { totalJobCost }),
    ...(lines ? { lines } : {}),
  };
  // Duplicates made outside htorder are worth a note on the entry; ours is the oldest.
  if (found.length > 1) {
    entry.error = `${found.length} jobs carry this order number: ${found.map((j) => j.jobNumber).join(', ')}`;
  }
  await ctx.ledger.write(entry, { guard });
  return entry;
}

function fromResponse(r: JobCreateResponse): Partial<LedgerEntry> {
  return {
    jobNumber: r.jobNumber,
    dateDue: r.dateDue,
    // NaN when the answer's cost could not be read (the client says so): unknown, not recorded.
    ...(Number.isFinite(r.totalJobCost) ? { totalJobCost: r.totalJobCost } : {}),
    lines: (r.jobLineDetails ?? []).map((l) => ({
      customerReference: l.customerReference ?? null,
      quantity: l.quantity,
      newAssetSku: l.newAssetSku ?? null,
      needsArtworkToBeUploaded: l.needsArtworkToBeUploaded === true,
    })),
  };
}
