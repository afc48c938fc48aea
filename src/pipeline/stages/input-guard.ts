import type { JobEndList } from '../job-end.js';
import { isAbsolute, resolve } from 'node:path';
import { nowDate, nowIso } from '../../core/clock.js';
import { amountText } from '../../core/money.js';
import type { Diagnostic } from '../../manifest/model.js';
import {
  approvedName,
  contentKeyOf,
  contentName,
  heldName,
  type HeldNote,
  type HoldReason,
  MAX_HELD_JOBS,
  SPEND_LOCK,
  spendName,
  type SpendNote,
  spentOf,
  utcDay,
  withContentOrder,
  withoutContentOrder,
} from '../guard-notes.js';
import { fullResolution, withFindings, type JobState } from '../job-state.js';
import { holdsInput } from '../job-status.js';
import type { StageContext } from './context.js';
import { hold } from './guard.js';

/**
 * The guardrails over a whole input and over the account's day (docs/guardrails.md), once
 * every job is through the plan stages: `maxInputCost` and `maxDailyCost`, and what the ledger
 * keeps of them (held jobs, the day's spend, the content index).
 */

type Ready = JobState & { outcome: 'ready' };

function isReady(job: JobState): job is Ready {
  return job.outcome === 'ready';
}

function costOf(job: Ready): number {
  return job.resolved.estimate.total ?? 0;
}

function currencyOf(jobs: readonly JobState[]): string | undefined {
  return jobs.find(isReady)?.resolved.estimate.currency;
}

/** `maxInputCost`: when the input's ready jobs together cost more, each one not approved waits. */
export async function overInputCost(jobs: JobState[], ctx: StageContext): Promise<JobState[]> {
  const max = ctx.guard.maxInputCost;
  if (max === undefined) return jobs;
  const total = jobs.filter(isReady).reduce((sum, job) => sum + costOf(job), 0);
  if (total <= max) return jobs;
  const cur = currencyOf(jobs);
  const reason: HoldReason = {
    code: 'approval.input-cost',
    message: `the input's jobs together are estimated at ${amountText(total, cur)}, over maxInputCost ${amountText(max, cur)}`,
  };
  return Promise.all(jobs.map((job) => hold(job, [reason], ctx)));
}

/**
 * `maxDailyCost`: the jobs that fit in what is left of the account's day are counted in the
 * ledger as one update of the day's note (LedgerStore.updateNote), so processes and hosts
 * sharing the ledger share the budget; one
 * beyond it waits unless approved. Without `partial`, nothing is counted when any job waits
 * (all or nothing). `count: false` (plan): only looks.
 */
export async function overDailyCost(
  jobs: JobState[],
  ctx: StageContext,
  opts: { partial: boolean; count: boolean },
): Promise<JobState[]> {
  const max = ctx.guard.maxDailyCost;
  if (max === undefined || !jobs.some(isReady)) return jobs;
  const name = spendName(utcDay(nowDate(ctx.clock)));
  let out: JobState[] = [];
  /** The jobs' fate given the day's note, and the note's next value (undefined: unchanged). */
  const decide = async (note: SpendNote | undefined): Promise<SpendNote | undefined> => {
    const orders = { ...note?.orders };
    // This input's own orders counted by an earlier attempt are counted again below, not twice.
    for (const job of jobs) if (isReady(job)) delete orders[job.orderNumber];
    let spent = spentOf({ noteVersion: 1, day: '', orders });
    const cur = currencyOf(jobs);
    out = [];
    for (const job of jobs) {
      if (!isReady(job)) {
        out.push(job);
        continue;
      }
      const cost = costOf(job);
      const next =
        job.approval || spent + cost <= max ? job : await hold(job, [dailyReason(spent, cost, max, cur)], ctx);
      if (next.outcome === 'ready') {
        spent += cost;
        orders[job.orderNumber] = cost;
      }
      out.push(next);
    }
    // A job that holds only itself (a suspected duplicate) does not stop the others being counted and sent.
    const waiting = out.some(holdsInput);
    return opts.count && (opts.partial || !waiting) ? { noteVersion: 1, day: name.slice(-10), orders } : undefined;
  };
  // One step against every other process counting into the same day (a database: one transaction).
  if (opts.count) await ctx.ledger.updateNote<SpendNote>(ctx.account, name, decide, { lock: SPEND_LOCK });
  else await decide(await ctx.ledger.readNote<SpendNote>(ctx.account, name));
  return out;
}

function dailyReason(spent: number, cost: number, max: number, cur: string | undefined): HoldReason {
  return {
    code: 'approval.daily-cost',
    message:
      `estimate ${amountText(cost, cur)} with the ${amountText(spent, cur)} already counted today (UTC) ` +
      `is over maxDailyCost ${amountText(max, cur)}`,
  };
}

/** Gives back to the day's budget what was counted for jobs that were not created after all. */
export async function releaseUnspent(jobs: JobEndList, ctx: StageContext): Promise<void> {
  if (ctx.guard.maxDailyCost === undefined) return;
  const unspent = jobs.filter((job) => job.outcome === 'not-created' || job.outcome === 'not-processed');
  if (unspent.length === 0) return;
  const name = spendName(utcDay(nowDate(ctx.clock)));
  await ctx.ledger.updateNote<SpendNote>(
    ctx.account,
    name,
    async (note) => {
      if (!note) return undefined;
      const orders = { ...note.orders };
      for (const job of unspent) delete orders[job.orderNumber];
      return { ...note, orders };
    },
    { lock: SPEND_LOCK },
  );
}

/**
 * At most MAX_HELD_JOBS jobs of one input wait for approval: beyond it, each of them is
 * refused instead (the input fails, nothing of it is kept for approval), so no input can fill
 * the ledger with held jobs or an operator's list with thousands of one file's orders.
 */
export function capHeld(jobs: JobState[], ctx: StageContext): JobState[] {
  const held = jobs.filter((job) => job.outcome === 'awaiting-approval').length;
  if (held <= MAX_HELD_JOBS) return jobs;
  const message =
    `${held} jobs of this input wait for approval, more than the ${MAX_HELD_JOBS} one input may hold: ` +
    'none of them is kept for approval; split the input, or change what holds them (limits, suspected duplicates)';
  return jobs.map((job) => {
    if (job.outcome !== 'awaiting-approval') return job;
    const field = `jobs[${job.index}]`;
    const tooMany: Diagnostic = {
      severity: 'error',
      code: 'approval.too-many-held',
      message,
      field,
      source: ctx.manifest.sources.locate(field),
    };
    return { ...withFindings(job, [tooMany]), outcome: 'refused' };
  });
}

/** Records the input's jobs that wait in the ledger (one note per input), for `htorder approve` and the watcher. */
export async function recordHeld(jobs: readonly JobState[], ctx: StageContext): Promise<void> {
  const waiting = jobs.filter((job) => job.outcome === 'awaiting-approval');
  if (waiting.length === 0) return;
  const { sha256 } = ctx.manifest;
  const note: HeldNote = {
    noteVersion: 2,
    input: { file: inputPath(ctx.displayName), sha256 },
    heldAt: nowIso(ctx.clock),
    jobs: waiting.map((job) => {
      const estimate = job.resolved?.estimate;
      return {
        orderNumber: job.orderNumber,
        fingerprint: job.hash,
        reasons: (job.holdReasons ?? []).map((r) => r.detail ?? r.message),
        ...(estimate?.total === undefined ? {} : { estimate: estimate.total }),
        ...(estimate?.currency ? { currency: estimate.currency } : {}),
      };
    }),
  };
  await ctx.ledger.writeNote(ctx.account, heldName(sha256), note);
}

/** An input's name for people who look for it later: a path given to run made absolute; a URL as it is. */
function inputPath(name: string): string {
  return isAbsolute(name) || /^[a-z][a-z0-9+.-]*:\/\//i.test(name) ? name : resolve(name);
}

/**
 * Once a run of an input that had approvals ends with nothing waiting, its held note goes; once
 * every job of it is submitted, its approvals go too (they were used; a later run of it finds
 * every job `already-submitted` in the ledger, approval or not).
 */
export async function forgetApproved(jobs: JobEndList, ctx: StageContext): Promise<void> {
  if (!jobs.some((job) => job.approved)) return;
  if (jobs.some((job) => job.outcome === 'awaiting-approval')) return;
  const { sha256 } = ctx.manifest;
  try {
    await ctx.ledger.deleteNote(ctx.account, heldName(sha256));
    if (jobs.every((job) => job.outcome === 'created' || job.outcome === 'found'))
      await ctx.ledger.deleteNote(ctx.account, approvedName(sha256));
  } catch (err) {
    // Housekeeping only: a note left behind is removed by age (pruneApprovalNotes).
    ctx.logger.warn({ file: ctx.displayName, err: (err as Error).message }, 'could not remove used approval notes');
  }
}

/**
 * The stage before submit: the order goes into the index suspected duplicates are found by,
 * with the input it came from — whatever this input's window, as inputs of other routes or
 * profiles of the account may look further back (a window of 0 turns the check off, not the
 * index). It is written before the create, as the ledger's intent is: a run killed between the
 * create and this write would leave a sent order out, and a later re-send of its content would
 * not wait. An order proven not created leaves the index again (forgetRefusedContent); one
 * killed before it was sent stays and can only make a later re-send wait.
 * A database ledger updates the entry in one transaction; a file ledger reads and writes it
 * without a lock, one process's updates of it one after another (NoteUpdates): orders of one
 * content sent at the same moment by two processes may keep only one of them, which weakens a
 * later suspicion and never sends anything.
 */
export async function rememberContent(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  const name = contentName(contentKeyOf(fullResolution(job).candidate));
  const order = { orderNumber: job.orderNumber, at: nowIso(ctx.clock), input: ctx.manifest.sha256 };
  // Not fsynced: a note lost in a power cut only weakens the suspicion, never sends anything.
  await ctx.ledger.updateNote<unknown>(ctx.account, name, async (note) => withContentOrder(note, order), {
    durable: false,
  });
  return job;
}

/** The stage after submit: an order proven not created is no reason to hold another, so it leaves the index. */
export async function forgetRefusedContent(job: JobState, ctx: StageContext): Promise<JobState> {
  const { resolved } = job;
  if (job.outcome !== 'not-created' || !resolved) return job;
  const name = contentName(contentKeyOf(fullResolution({ orderNumber: job.orderNumber, resolved }).candidate));
  await ctx.ledger.updateNote<unknown>(ctx.account, name, async (note) => withoutContentOrder(note, job.orderNumber), {
    durable: false,
  });
  return job;
}
