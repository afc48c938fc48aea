import { basename } from 'node:path';
import type { Logger } from '../core/log/logger.js';
import type { WatchEvents } from '../watch/events.js';
import type { WatchMetrics } from '../watch/metrics.js';
import { processInput, type InputOutcome, type PipelineContext } from '../pipeline/process-input.js';
import type { JobStatus } from '../report/model.js';
import type { ReportTarget } from '../report/write-reports.js';
import { writeFileAtomic } from '../storage/atomic-write.js';
import type { InputAttempts } from '../watch/sources/attempts.js';
import { ClaimLostError, type ClaimedInput, type InputChange } from '../watch/sources/model.js';
import type { HandleResult } from '../watch/watcher.js';

export interface HandleContext {
  /**
   * The pipeline context for `run` (client, catalogue, ledger, account). A function because
   * the account is learnt from the API, which may be down: a throw means "unavailable".
   */
  pipeline: () => Promise<PipelineContext>;
  logger: Logger;
  metrics?: WatchMetrics;
  /** Told how each input ended (done/failed) and whether the API could be reached. */
  events?: WatchEvents;
  /** Told when the API was unavailable, so cached look-ups (failures included) are dropped before the retry. */
  onUnavailable?: () => void;
  /** Poison-file protection: inputs whose processing a crash interrupted too often are set aside. */
  attempts?: InputAttempts;
}

/**
 * One claimed input through `run` (exactly once, via the ledger), then to done/ (every job
 * submitted or already submitted) or failed/ (anything invalid or refused), reports beside
 * it. When the API or store was unavailable nothing was decided: the input stays claimed in
 * processing/ and the watcher retries it later (exit code 3's meaning, for a daemon). When
 * the input changed while it was processed, it is given back to wait until complete (requeued).
 */
export async function handleInput(
  input: ClaimedInput,
  lease: { lost: () => boolean },
  ctx: HandleContext,
): Promise<HandleResult> {
  const { logger } = ctx;
  if (input.refused !== undefined) return setAside(input, input.refused, ctx);
  const started = performance.now();
  // What this input shows of the API is evidence from now on (WatchEvents.apiSeen).
  const began = Date.now();
  let pipeline: PipelineContext;
  try {
    pipeline = await ctx.pipeline();
  } catch (err) {
    logger.warn(
      { file: input.location, err: (err as Error).message },
      'cannot reach the API or the credentials were refused',
    );
    ctx.events?.apiSeen(false, 'cannot reach the API or the credentials were refused', began);
    ctx.onUnavailable?.();
    return 'retry';
  }
  const attempts = ctx.attempts;
  const key =
    attempts && input.sha256 !== undefined ? attempts.keyOf(input.location, input.name, input.sha256) : undefined;
  if (attempts && key) {
    const n = await attempts.begin(key);
    if (n > attempts.max) {
      const why =
        `set aside: processing it began ${n - 1} times and each time the watcher stopped before it ended ` +
        `(a crash, out of memory, or killed); after ${attempts.max} attempts it is not tried again ` +
        '(setting watchMaxInputAttempts). Check the file, then drop it again';
      const result = await setAside(input, why, ctx);
      await attempts.end(key);
      return result;
    }
  }
  try {
    return await processClaimed(input, lease, ctx, pipeline, started, began);
  } finally {
    // Ended without a crash, whatever the result: only a crash leaves the count behind.
    if (attempts && key) await attempts.end(key).catch(() => undefined);
  }
}

async function processClaimed(
  input: ClaimedInput,
  lease: { lost: () => boolean },
  ctx: HandleContext,
  pipeline: PipelineContext,
  started: number,
  began: number,
): Promise<HandleResult> {
  const { logger } = ctx;
  // Never act on a file that is still changing (docs/watch.md#a-file-that-changes-while-it-is-processed):
  // compared with what was read at claim right before the first submit (and each change of a
  // submitted job), and before it is moved out. Callers at the same moment share one check.
  let changed: InputChange | undefined;
  let checking: Promise<InputChange | undefined> | undefined;
  const beforeSubmit = async (): Promise<string | undefined> => {
    if (!changed) {
      checking ??= input.recheck('submit').finally(() => {
        checking = undefined;
      });
      changed ??= await checking;
    }
    return changed && `${input.name} changed while being processed (${changed.what})`;
  };
  // Reports are written once, where the input ends up (at finish), not beside the private copy.
  const outcome = await processInput(input.path, {
    ...pipeline,
    command: 'run',
    reportCommand: 'watch',
    beforeSend: beforeSubmit,
    deferReports: true,
  });
  if (!changed && !lease.lost()) changed = await input.recheck('finish');
  if (changed && !lease.lost()) return requeue(input, changed, submittedBy(outcome), ctx);
  if (outcome.status === 'unavailable') {
    const doubt = outcome.report?.summary.byStatus['in-doubt'] ?? 0;
    if (doubt > 0 && outcome.report) {
      ctx.events?.retryDetail(input.name, {
        summary: outcome.report.summary,
        problem: `${doubt} job(s) in doubt: the API could not say whether they were created`,
      });
    }
    ctx.events?.apiSeen(false, outcome.problem ?? 'the API was unavailable', began);
    ctx.onUnavailable?.();
    return 'retry';
  }
  ctx.events?.apiSeen(true, undefined, began);
  if (lease.lost()) {
    logger.warn({ file: input.location }, 'claim lost while processing; the instance that took it over finishes it');
    return 'lost';
  }
  const target = outcome.status === 'ok' ? 'done' : 'failed';
  const report = outcome.report;
  const final = await finishUnlessLost(input, target, async (to) => {
    // The report names where the input ends up, not the claim's working copy.
    if (outcome.writeReports) return outcome.writeReports(to);
    // Unreadable (vanished, not a regular file…): no report could be built; say why.
    return writeErrorsOnly(to, `${basename(input.name)}: ${outcome.problem ?? 'cannot be read'}\n`);
  });
  if (final === undefined) {
    logger.warn({ file: input.location }, 'claim lost before finishing; the instance that took it over finishes it');
    return 'lost';
  }
  const byStatus = report?.summary.byStatus ?? ({} as Partial<Record<JobStatus, number>>);
  for (const [status, n] of Object.entries(byStatus)) if (n) ctx.metrics?.jobs.inc({ status }, n);
  const seconds = (performance.now() - started) / 1000;
  ctx.metrics?.fileDuration.observe(seconds);
  const fields = {
    file: final,
    outcome: target,
    jobs: report?.summary.jobs ?? 0,
    byStatus: compact(byStatus),
    durationMs: Math.round(seconds * 1000),
  };
  ctx.events?.input({
    name: input.name,
    location: final,
    phase: target,
    durationMs: fields.durationMs,
    ...(report ? { summary: report.summary } : {}),
    ...(target === 'failed' ? { problem: outcome.problem ?? 'see its reports' } : {}),
  });
  if (target === 'done') logger.info(fields, 'input done');
  else logger.warn({ ...fields, problem: outcome.problem }, 'input failed; see its reports');
  return target;
}

/**
 * Gives a changed input back to its source (ClaimedInput.requeue), this attempt's reports
 * discarded: processed again in full once complete, the ledger keeping the jobs already
 * submitted (`submitted`, only when the change showed after the submit) exactly once.
 */
async function requeue(
  input: ClaimedInput,
  change: InputChange,
  submitted: number,
  ctx: HandleContext,
): Promise<HandleResult> {
  let location: string;
  try {
    location = await input.requeue();
  } catch (err) {
    if (err instanceof ClaimLostError) return 'lost';
    throw err;
  }
  const sent =
    submitted === 0 ? 'nothing submitted' : `${submitted} job(s) submitted before the change showed, not sent again`;
  const problem = `changed while being processed (${change.what}): ${sent}; ${change.next}`;
  ctx.events?.input({ name: input.name, location, phase: 'requeued', problem });
  ctx.logger.warn({ file: location, outcome: 'requeued', submitted, problem }, 'input requeued');
  return 'requeued';
}

/** How many jobs this attempt created (from its report). */
function submittedBy(outcome: InputOutcome): number {
  return outcome.report?.summary.byStatus.submitted ?? 0;
}

/** Finishes an input as failed without processing it, its errors.txt saying why. */
export async function setAside(
  input: ClaimedInput,
  why: string,
  ctx: Pick<HandleContext, 'logger' | 'events'>,
): Promise<HandleResult> {
  const final = await finishUnlessLost(input, 'failed', (to) =>
    writeErrorsOnly(to, `${basename(input.name)}: ${why}\n`),
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

/** input.finish, or undefined when the claim turned out to be another instance's (ClaimLostError). */
async function finishUnlessLost(
  input: ClaimedInput,
  ...args: Parameters<ClaimedInput['finish']>
): Promise<string | undefined> {
  try {
    return await input.finish(...args);
  } catch (err) {
    if (err instanceof ClaimLostError) return undefined;
    throw err;
  }
}

function compact(byStatus: Partial<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(byStatus).filter(([, n]) => (n ?? 0) > 0)) as Record<string, number>;
}
