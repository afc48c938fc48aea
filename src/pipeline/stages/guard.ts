import { durationText } from '../../core/clock.js';
import type { Diagnostic } from '../../manifest/model.js';
import { amountText } from '../../core/money.js';
import { lookAtEntry } from '../../storage/ledger/model.js';
import { approvalFor, contentKeyOf, contentName, contentOrders, type HoldReason, suspectedOf } from '../guard-notes.js';
import { fullResolution, withFindings, type JobState } from '../job-state.js';
import { DUPLICATE } from '../job-status.js';
import type { StageContext } from './context.js';

/**
 * The guardrails of one job (docs/guardrails.md): a ready job over a limit, or whose content
 * the ledger recorded lately under another order number, waits for approval instead of being
 * sent — unless its fingerprint was approved. Nothing here asks the API.
 */

/** The limits, each off when absent (settings maxJobCost, maxInputCost, maxDailyCost, maxLineQuantity, duplicateWindow). */
export interface GuardLimits {
  maxJobCost?: number;
  maxInputCost?: number;
  maxDailyCost?: number;
  maxLineQuantity?: number;
  /** How long before a job an order with its content counts as a suspected duplicate, in ms; 0: not looked for. */
  duplicateWindowMs: number;
}

export const NO_LIMITS: GuardLimits = { duplicateWindowMs: 0 };

/** The stage: a ready job over a job-level limit or a suspected duplicate waits for approval. */
export async function guard(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  const reasons = jobReasons(job, ctx.guard);
  const duplicate = await duplicateOf(job, ctx);
  if (duplicate) reasons.push(duplicate);
  return reasons.length === 0 ? job : hold(job, reasons, ctx);
}

/** The job's own reasons to wait, from its estimate and lines alone. */
function jobReasons(job: JobState & { outcome: 'ready' }, limits: GuardLimits): HoldReason[] {
  const reasons: HoldReason[] = [];
  const { estimate } = fullResolution(job);
  const max = limits.maxLineQuantity;
  if (max !== undefined) {
    const line = estimate.lines.find((l) => l.quantity > max);
    if (line)
      reasons.push({
        code: 'approval.line-quantity',
        message: `line ${line.index + 1} orders ${line.quantity}, over maxLineQuantity ${max}`,
      });
  }
  const costLimited =
    limits.maxJobCost !== undefined || limits.maxInputCost !== undefined || limits.maxDailyCost !== undefined;
  if (costLimited && (estimate.total === undefined || !estimate.complete)) {
    reasons.push({
      code: 'approval.estimate-incomplete',
      message: 'its cost cannot be estimated in full, so the cost limits cannot be checked',
    });
  } else if (limits.maxJobCost !== undefined && (estimate.total ?? 0) > limits.maxJobCost) {
    const cur = estimate.currency;
    reasons.push({
      code: 'approval.job-cost',
      message: `estimate ${amountText(estimate.total ?? 0, cur)} is over maxJobCost ${amountText(limits.maxJobCost, cur)}`,
    });
  }
  return reasons;
}

/**
 * Why the job waits when the ledger's content index holds an order with its content sent from
 * another input within the window (guard-notes.ts, suspectedOf), and not cancelled since. The
 * report's message names no other order: reports are for whoever dropped the input, and the
 * earlier order may be someone else's; the detail is for the operator.
 */
async function duplicateOf(job: JobState & { outcome: 'ready' }, ctx: StageContext): Promise<HoldReason | undefined> {
  const windowMs = ctx.guard.duplicateWindowMs;
  if (windowMs === 0) return undefined;
  const note = await ctx.ledger.readNote<unknown>(
    ctx.account,
    contentName(contentKeyOf(fullResolution(job).candidate)),
  );
  const mine = { orderNumber: job.orderNumber, input: ctx.manifest.sha256 };
  for (const seen of suspectedOf(contentOrders(note), mine, ctx.clock.now(), windowMs)) {
    // The ledger's entry: a cancelled order is no reason to hold another; its job number is told
    // to the operator (the index is written before the create, so it has none). One that cannot
    // be read is not known to be cancelled: the suspicion stands.
    const read = await lookAtEntry(ctx.ledger, { account: ctx.account, orderNumber: seen.orderNumber });
    const entry = read === 'unreadable' ? undefined : read;
    if (entry?.cancelledAt !== undefined) continue;
    const jobNumber = seen.jobNumber ?? entry?.jobNumber;
    return {
      code: DUPLICATE,
      message:
        `suspected duplicate: an order sent from another input of this account within the last ${durationText(windowMs)} ` +
        '(duplicateWindow) has the same delivery address and items; htorder approve --list names it',
      detail:
        `suspected duplicate: order ${JSON.stringify(seen.orderNumber)}${jobNumber === undefined ? '' : ` (job ${jobNumber})`} ` +
        `sent ${seen.at} has the same delivery address and items`,
    };
  }
  return undefined;
}

/**
 * The job held for `reasons`, or let through when this input's job with its fingerprint was
 * approved (then a warning says by whom).
 */
export async function hold(job: JobState, reasons: readonly HoldReason[], ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  if (job.approval) return job;
  const approval = await approvalFor(ctx.ledger, ctx.account, ctx.manifest, job.orderNumber, job.hash);
  const field = `jobs[${job.index}]`;
  const at = { field, source: ctx.manifest.sources.locate(field) };
  if (approval) {
    const { by, at: when, note: why } = approval;
    const approved: Diagnostic = {
      severity: 'warning',
      code: 'approval.approved',
      message: `${reasons.map((r) => r.message).join('; ')}: approved by ${by} at ${when}${why ? ` (${why})` : ''}`,
      ...at,
    };
    return { ...withFindings(job, [approved]), approval };
  }
  const held: Diagnostic[] = reasons.map((r) => ({
    severity: 'error',
    code: r.code,
    message: `awaiting approval: ${r.message} (htorder approve)`,
    ...at,
  }));
  return { ...withFindings(job, held), outcome: 'awaiting-approval', holdReasons: reasons };
}
