import { basename } from 'node:path';
import { unavailableReason } from '../api/errors.js';
import type { Logger } from '../core/log/logger.js';
import type { WatchEvents } from '../watch/events.js';
import type { WatchMetrics } from '../watch/metrics.js';
import { noteWhereHeld } from '../pipeline/approve.js';
import { processInput, type InputOutcome, type PipelineContext } from '../pipeline/process-input.js';
import type { ReportTarget } from '../report/write-reports.js';
import { writeFileAtomic } from '../storage/atomic-write.js';
import type { InputAttempts } from '../watch/attempts.js';
import { ClaimLostError, type ClaimedInput, type FinishOutcome, type InputChange } from '../watch/sources/model.js';
import type { HandleResult } from '../watch/scheduler.js';
import type { Handled } from '../watch/watcher.js';

export interface HandleContext {
  /** The pipeline context: a function, as the account is learnt from the API (a throw: unavailable). */
  pipeline: () => Promise<PipelineContext>;
  logger: Logger;
  metrics?: WatchMetrics;
  /** Told how each input ended (done/failed) and whether the API could be reached. */
  events?: WatchEvents;
  /** Told when the API was unavailable, so cached look-ups (failures included) are dropped before the retry. */
  onUnavailable?: () => void;
  /** Poison-file protection: inputs whose processing a crash interrupted too often are set aside. */
  attempts: InputAttempts;
}

/**
 * One claimed input through `run` (exactly once, via the ledger), then to done/ or failed/
 * with its reports; `retry` when the API or store was unavailable (nothing decided: it stays
 * claimed), `requeued` when it changed while processed (given back to wait until complete).
 */
export async function handleInput(
  input: ClaimedInput,
  lease: { lost: () => boolean },
  ctx: HandleContext,
): Promise<Handled> {
  if (input.refused !== undefined) return setAside(input, input.refused, ctx);
  // What this input shows of the API is evidence from now on (WatchEvents.apiSeen).
  const startedAt = Date.now();
  let pipeline: PipelineContext;
  try {
    pipeline = await ctx.pipeline();
  } catch (err) {
    const why = unavailableReason(err);
    ctx.logger.warn({ file: input.location, err: (err as Error).message }, why);
    ctx.events?.apiSeen(false, why, startedAt);
    ctx.onUnavailable?.();
    return 'retry';
  }
  const { attempts } = ctx;
  // Only a refused input, set aside above, has no hash.
  const key = attempts.keyOf(input.location, input.name, input.sha256 ?? '');
  const n = await attempts.begin(key);
  try {
    if (n <= attempts.max) return await processClaimed(input, lease, ctx, pipeline, startedAt);
    const why =
      `set aside: processing it began ${n - 1} times and each time the watcher stopped before it ended ` +
      `(a crash, out of memory, or killed); after ${attempts.max} attempts it is not tried again ` +
      '(setting watchMaxInputAttempts). Check the file, then drop it again';
    return await setAside(input, why, ctx);
  } finally {
    // Ended without a crash, whatever the result: only a crash leaves the count behind.
    await attempts.end(key).catch(() => undefined);
  }
}

async function processClaimed(
  input: ClaimedInput,
  lease: { lost: () => boolean },
  ctx: HandleContext,
  pipeline: PipelineContext,
  startedAt: number,
): Promise<Handled> {
  const change = changeCheck(input);
  // Reports are written once, where the input ends up (at finish), not beside the private copy.
  const outcome = await processInput(input.path, {
    ...pipeline,
    command: 'watch',
    displayName: input.location,
    keepJobs: false,
    ...(input.artworkFolder ? { artworkFolder: input.artworkFolder } : {}),
    hooks: { beforeSend: change.beforeSend },
  });
  try {
    return await finishProcessed(input, outcome, { lease, ctx, pipeline, startedAt, change });
  } finally {
    // The report's temporary files, beside the private copy, whether its reports were written or not.
    await outcome.close?.();
  }
}

/** What processClaimed knows as its input's outcome is in. */
interface Processed {
  lease: { lost: () => boolean };
  ctx: HandleContext;
  pipeline: PipelineContext;
  startedAt: number;
  change: ReturnType<typeof changeCheck>;
}

/** Where a processed input goes (done/, failed/, held/, back to the queue), its reports with it. */
async function finishProcessed(
  input: ClaimedInput,
  outcome: InputOutcome,
  { lease, ctx, pipeline, startedAt, change }: Processed,
): Promise<Handled> {
  const { logger } = ctx;
  const changed = lease.lost() ? undefined : await change.beforeMove();
  if (changed) return requeue(input, changed, outcome.report?.summary.byStatus.submitted ?? 0, ctx);
  if (outcome.status === 'unavailable') {
    ctx.events?.apiSeen(false, outcome.problem ?? 'the API was unavailable', startedAt);
    ctx.onUnavailable?.();
    const doubt = outcome.report?.summary.byStatus['in-doubt'] ?? 0;
    if (doubt === 0 || !outcome.report) return 'retry';
    const problem = `${doubt} job(s) in doubt: the API could not say whether they were created`;
    return { result: 'retry', detail: { summary: outcome.report.summary, problem } };
  }
  ctx.events?.apiSeen(true, undefined, startedAt);
  const target: FinishOutcome = outcome.status === 'ok' ? 'done' : outcome.status === 'held' ? 'held' : 'failed';
  const final = lease.lost()
    ? undefined
    : await unlessLost(
        input.finish(target, (to) =>
          // The report names where the input ends up, not the claim's working copy. Unreadable
          // (vanished, not a regular file…): no report could be built; errors.txt says why.
          outcome.writeReports
            ? outcome.writeReports(to)
            : writeErrorsOnly(to, `${basename(input.name)}: ${outcome.problem ?? 'cannot be read'}\n`),
        ),
      );
  if (final === undefined) {
    logger.warn({ file: input.location }, 'claim lost while processing; the instance that took it over finishes it');
    return 'lost';
  }
  tellFinished(input.name, final, target, outcome, ctx, Date.now() - startedAt);
  if (target === 'held') await noteHeld(input, final, outcome, pipeline, ctx);
  return target;
}

/** Where a held input waits (`held/X`) and was dropped, in its held note: `approve` takes either path. */
async function noteHeld(
  input: ClaimedInput,
  final: string,
  outcome: InputOutcome,
  { ledger, account }: PipelineContext,
  ctx: HandleContext,
): Promise<void> {
  const sha256 = outcome.report?.input.sha256 ?? input.sha256;
  if (!sha256) return;
  // `…/processing/X` → `…/X`: a folder path or an s3:// URL alike.
  const processing = input.location.slice(0, input.location.lastIndexOf('/'));
  const dropped = `${processing.slice(0, processing.lastIndexOf('/'))}/${input.name}`;
  await noteWhereHeld(ledger, account, sha256, { held: final, dropped }).catch((err: unknown) => {
    ctx.logger.warn({ file: final, err: (err as Error).message }, 'could not record where the held input waits');
  });
}

/**
 * Never act on a file that is still changing (docs/watch.md#a-file-that-changes-while-it-is-processed):
 * it is compared with what was read at claim right before the first send (and each change of
 * a submitted job; callers at the same moment share one check), and before it is moved out.
 */
function changeCheck(input: ClaimedInput) {
  let changed: InputChange | undefined;
  let checking: Promise<InputChange | undefined> | undefined;
  return {
    beforeSend: async (): Promise<string | undefined> => {
      if (!changed) {
        checking ??= input.recheck('submit').finally(() => {
          checking = undefined;
        });
        changed ??= await checking;
      }
      return changed && `${input.name} changed while being processed (${changed.what})`;
    },
    beforeMove: async (): Promise<InputChange | undefined> => {
      changed ??= await input.recheck('finish');
      return changed;
    },
  };
}

/** Metrics, event and log line of an input finished into done/, failed/ or held/. */
function tellFinished(
  name: string,
  final: string,
  target: FinishOutcome,
  outcome: InputOutcome,
  ctx: HandleContext,
  durationMs: number,
): void {
  const report = outcome.report;
  const byStatus = Object.entries(report?.summary.byStatus ?? {}).filter(([, n]) => n > 0);
  for (const [status, n] of byStatus) ctx.metrics?.jobs.inc({ status }, n);
  ctx.metrics?.fileDuration.observe(durationMs / 1000);
  const jobs = report?.summary.jobs ?? 0;
  const fields = { file: final, outcome: target, jobs, byStatus: Object.fromEntries(byStatus), durationMs };
  ctx.events?.input({
    name,
    location: final,
    phase: target,
    durationMs,
    ...(report ? { summary: report.summary } : {}),
    ...(target === 'failed'
      ? { problem: outcome.problem ?? outcome.quotes?.firstErrors(basename(name)) ?? 'see its reports' }
      : {}),
    ...(target === 'held'
      ? {
          problem:
            outcome.quotes?.heldReasons(basename(name)) ?? 'jobs wait for approval (htorder approve); see its reports',
        }
      : {}),
  });
  if (target === 'done') ctx.logger.info(fields, 'input done');
  else if (target === 'held') ctx.logger.warn(fields, 'input held: jobs wait for approval (htorder approve)');
  else ctx.logger.warn({ ...fields, problem: outcome.problem }, 'input failed; see its reports');
}

/**
 * Gives a changed input back (ClaimedInput.requeue), this attempt's reports discarded: it is
 * processed again in full, the ledger keeping the jobs `submitted` before the change showed.
 */
async function requeue(
  input: ClaimedInput,
  change: InputChange,
  submitted: number,
  ctx: HandleContext,
): Promise<HandleResult> {
  const location = await unlessLost(input.requeue());
  if (location === undefined) return 'lost';
  const sent =
    submitted === 0 ? 'nothing submitted' : `${submitted} job(s) submitted before the change showed, not sent again`;
  const problem = `changed while being processed (${change.what}): ${sent}; ${change.next}`;
  ctx.events?.input({ name: input.name, location, phase: 'requeued', problem });
  ctx.logger.warn({ file: location, outcome: 'requeued', submitted, problem }, 'input requeued');
  return 'requeued';
}

/** Finishes an input as failed without processing it, its errors.txt saying why. */
export async function setAside(
  input: ClaimedInput,
  why: string,
  ctx: Pick<HandleContext, 'logger' | 'events'>,
): Promise<HandleResult> {
  const final = await unlessLost(
    input.finish('failed', (to) => writeErrorsOnly(to, `${basename(input.name)}: ${why}\n`)),
  );
  if (final === undefined) return 'lost';
  ctx.events?.input({ name: input.name, location: final, phase: 'failed', problem: why });
  ctx.logger.warn({ file: final, outcome: 'failed', problem: why }, 'input set aside');
  return 'failed';
}

/** An input without a report: only its errors.txt, saying why. */
async function writeErrorsOnly(to: ReportTarget, text: string): Promise<{ errors: string }> {
  await writeFileAtomic(to.paths.errors, text, to.file);
  return { errors: to.paths.errors };
}

/** What `act` returns, or undefined when the claim turned out to be another instance's (ClaimLostError). */
async function unlessLost<T>(act: Promise<T>): Promise<T | undefined> {
  try {
    return await act;
  } catch (err) {
    if (err instanceof ClaimLostError) return undefined;
    throw err;
  }
}
