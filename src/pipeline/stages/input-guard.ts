import { nowDate, nowIso } from '../../core/clock.js';
import { amountText } from '../../core/money.js';
import {
  approvalName,
  type ApprovalNote,
  contentKey,
  contentName,
  type HoldReason,
  SPEND_LOCK,
  spendName,
  type SpendNote,
  spentOf,
  utcDay,
  withContentOrder,
} from '../guard-notes.js';
import type { JobState } from '../job-state.js';
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
export async function releaseUnspent(jobs: readonly JobState[], ctx: StageContext): Promise<void> {
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

/** Records every job that waits in the ledger, for `htorder approve` (an earlier approval of another fingerprint is dropped). */
export async function recordHeld(jobs: readonly JobState[], ctx: StageContext): Promise<void> {
  const now = nowIso(ctx.clock);
  const { file, sha256 } = ctx.manifest;
  await Promise.all(
    jobs.map((job) => {
      if (job.outcome !== 'awaiting-approval') return undefined;
      const estimate = job.resolved?.estimate;
      const note: ApprovalNote = {
        noteVersion: 1,
        orderNumber: job.orderNumber,
        fingerprint: job.hash,
        heldAt: now,
        reasons: (job.holdReasons ?? []).map((r) => r.detail ?? r.message),
        input: { file, sha256 },
        ...(estimate?.total === undefined ? {} : { estimate: estimate.total }),
        ...(estimate?.currency ? { currency: estimate.currency } : {}),
      };
      return ctx.ledger.writeNote(ctx.account, approvalName(job.orderNumber), note);
    }),
  );
}

/**
 * The stage after submit: a created order goes into the index suspected duplicates are found
 * by, with the input it came from — whatever this input's window, as inputs of other routes or
 * profiles of the account may look further back (a window of 0 turns the check off, not the
 * index). A database ledger updates the entry in one transaction; a file ledger reads and
 * writes it without a lock: two orders of one content created at the same moment may keep
 * only one of them, which weakens a later suspicion and never sends anything.
 */
export async function rememberContent(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'created' || !job.resolved) return job;
  const name = contentName(contentKey(job.resolved.candidate));
  const jobNumber = job.ledger?.entry?.jobNumber;
  const order = {
    orderNumber: job.orderNumber,
    ...(jobNumber === undefined ? {} : { jobNumber }),
    at: nowIso(ctx.clock),
    input: ctx.manifest.sha256,
  };
  // Not fsynced: a note lost in a power cut only weakens the suspicion, never sends anything.
  await ctx.ledger.updateNote<unknown>(ctx.account, name, async (note) => withContentOrder(note, order), {
    durable: false,
  });
  return job;
}
