import { hash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { openPipelineContext } from '../app/pipeline-context.js';
import type { ConfigFlags } from '../core/config/resolve-config.js';
import { type Clock, nowIso } from '../core/clock.js';
import { ownershipProblem } from '../core/config/file-owner.js';
import { ExitCode } from '../core/errors.js';
import { amountText } from '../core/money.js';
import { printable } from '../core/printable.js';
import { VERSION } from '../core/version.js';
import type { InputOutcome, PipelineContext } from '../pipeline/process-input.js';
import {
  type PlanCheck,
  type PlannedInput,
  type PlannedJob,
  type SavedPlan,
  savedPlanText,
} from '../pipeline/saved-plan.js';
import { writeFileAtomic } from '../storage/atomic-write.js';
import type { CommandIo } from './command-io.js';
import { refusedByDropLedger } from './drop-ledger.js';
import { formatInputOutcome } from './format-outcome.js';
import type { SandboxOptions } from './help.js';
import { JsonJobRows } from './json-job-rows.js';
import { exitCodeOf, jsonSummary, pipelineHead, pipelineJob } from './json-summary.js';

/** What a saved plan holds of one input, and the currency its priced jobs gave. */
export interface SavedInput {
  input: PlannedInput;
  currency?: string;
}

/**
 * What `plan --out` keeps of one input's outcome: its valid jobs' requests, in the input's
 * order, and the account's currency where a job was priced; undefined for an input with no
 * bytes to hold a plan to (unreadable). The requests are the jobs' end records' (JobEnd.planned,
 * kept for the valid jobs only, in the input's order): no job's result is read back from the
 * report for its status.
 */
export function plannedInputOf(o: InputOutcome): SavedInput | undefined {
  if (!o.report?.input.sha256) return undefined;
  const jobs: PlannedJob[] = [...o.planned.values()];
  const input = { file: resolve(o.file), sha256: o.report.input.sha256, jobs };
  return jobs.length > 0 && o.currency !== undefined ? { input, currency: o.currency } : { input };
}

/** `plan --out`: what `run` would send now, per input, written atomically to `out`. */
export async function writeSavedPlan(
  out: string,
  account: string,
  planned: readonly SavedInput[],
  clock: Clock,
): Promise<SavedPlan> {
  const plan: SavedPlan = {
    planVersion: 1,
    htorderVersion: VERSION,
    createdAt: nowIso(clock),
    account,
    currency: planned.find((p) => p.currency !== undefined)?.currency ?? null,
    inputs: planned.map((p) => p.input),
  };
  // The user's own, private: apply refuses a plan others could have written (readPlanFile).
  await writeFileAtomic(out, savedPlanText(plan), { durable: true, mode: 0o600 });
  return plan;
}

/**
 * The saved plan's summary: its jobs and total, and the total against each cost limit set
 * (what `apply` would spend, in the account's currency).
 */
export function planSummary(out: string, plan: SavedPlan, limits: PipelineContext['guard']): string {
  const jobs = plan.inputs.flatMap((i) => i.jobs);
  const cur = plan.currency ?? undefined;
  const total = jobs.reduce((sum, j) => sum + (j.estimate ?? 0), 0);
  const unpriced = jobs.some((j) => j.estimate === null) ? ' (some jobs could not be priced)' : '';
  const lines = [
    `plan saved to ${printable(out)}: ${jobs.length} job(s), estimated total ${amountText(total, cur)}${unpriced}`,
  ];
  const largestInput = Math.max(0, ...plan.inputs.map((i) => i.jobs.reduce((sum, j) => sum + (j.estimate ?? 0), 0)));
  const largestJob = Math.max(0, ...jobs.map((j) => j.estimate ?? 0));
  const against = (name: string, value: number, max: number | undefined) => {
    if (max !== undefined)
      lines.push(`  ${name} ${amountText(max, cur)}: ${amountText(value, cur)}${value > max ? ' (over)' : ''}`);
  };
  against('maxJobCost', largestJob, limits?.maxJobCost);
  against('maxInputCost', largestInput, limits?.maxInputCost);
  against('maxDailyCost', total, limits?.maxDailyCost);
  lines.push(`  apply it with: htorder apply ${printable(out)}`);
  return `${lines.join('\n')}\n`;
}

export interface ApplyInput extends Partial<SandboxOptions> {
  plan: string;
  /** Amount an estimate may rise by since the plan (default 0). */
  tolerance?: number;
  /** Hours after which a plan is too old (default 24). */
  maxAgeHours?: number;
  json?: boolean;
  flags: ConfigFlags;
}

const HOUR_MS = 3_600_000;

/**
 * `htorder apply PLAN.json`: exactly the planned jobs through run's exactly-once path, or
 * nothing (exit 1, saying what changed) when an input's bytes, a request, an estimate beyond
 * the tolerance, the account or the plan's age says the plan no longer holds. Every input is
 * checked before anything of any input is sent.
 */
export async function runApply(input: ApplyInput, io: CommandIo): Promise<number> {
  const refuse = (why: string): number => {
    io.stderr.write(`htorder apply: refused, nothing sent: ${printable(why)}\n`);
    return ExitCode.Invalid;
  };
  let plan: SavedPlan;
  try {
    plan = parsePlan(await readPlanFile(input.plan));
  } catch (err) {
    io.stderr.write(`htorder apply: ${printable(input.plan)}: ${printable((err as Error).message)}\n`);
    return ExitCode.Usage;
  }
  for (const p of plan.inputs) {
    const now = await readFile(p.file).then(
      (bytes) => hash('sha256', bytes, 'hex'),
      () => undefined,
    );
    if (now !== p.sha256)
      return refuse(`${p.file} ${now === undefined ? 'cannot be read' : 'changed since it was planned'}`);
  }
  const pipeline = await openPipelineContext({ ...input, command: 'run', env: io.env, cwd: io.cwd, stderr: io.stderr });
  let rows: JsonJobRows | undefined;
  try {
    // A drop folder's files go through the ledger its watchers keep, as for run.
    const files = plan.inputs.map((p) => p.file);
    const dropRefused = await refusedByDropLedger(files, pipeline, io, 'apply');
    if (dropRefused !== undefined) return dropRefused;
    // The plan's age on the session's calendar clock, the one plan --out wrote it by.
    await pipeline.session.refreshClock();
    const stale = planAgeProblem(plan.createdAt, pipeline.session.clock.now(), input.maxAgeHours ?? 24);
    if (stale !== undefined) return refuse(stale);
    let context: PipelineContext;
    try {
      context = await pipeline.context();
    } catch (err) {
      io.stderr.write(
        `htorder apply: cannot reach the API or the credentials were refused: ${printable((err as Error).message)}\n`,
      );
      return ExitCode.Unavailable;
    }
    if (context.account !== plan.account)
      return refuse(`the plan is for account ${plan.account}, not ${context.account}`);
    const tolerance = input.tolerance ?? 0;
    const checkOf = (p: PlannedInput) => ({ jobs: new Map(p.jobs.map((j) => [j.orderNumber, j])), tolerance });
    const refused = await planAgain(plan.inputs, { ...context, checkOf }, io, refuse);
    if (refused !== undefined) return refused;
    const { processInput } = await import('../pipeline/process-input.js');
    const outcomes: InputOutcome[] = [];
    // --json lists every job: each input's rows wait in a file, not in memory (json-job-rows.ts).
    rows = input.json ? await JsonJobRows.open() : undefined;
    const onOutcome = async (o: InputOutcome) => {
      io.stderr.write(formatInputOutcome(o, 'run'));
      await rows?.add(o, pipelineJob);
    };
    for (const p of plan.inputs) {
      const ctx = { ...context, command: 'run' as const, planned: checkOf(p), keepJobs: false, hooks: { onOutcome } };
      outcomes.push(await processInput(p.file, ctx));
    }
    await pipeline.upkeep();
    const exitCode = exitCodeOf(outcomes);
    if (rows) await rows.write(io.stdout, jsonSummary('apply', outcomes, exitCode, pipelineHead), outcomes);
    return exitCode;
  } finally {
    await rows?.close();
    await pipeline.close();
  }
}

/**
 * apply's first pass: every input planned again and held to the plan (`checkOf`), so that a
 * refusal of any sends nothing of all. The first that no longer matches is said (its summary,
 * made as it ended, while its report's jobs could still be read) and its exit code returned;
 * undefined when every input matches.
 */
async function planAgain(
  inputs: readonly PlannedInput[],
  { checkOf, ...context }: PipelineContext & { checkOf: (p: PlannedInput) => PlanCheck },
  io: CommandIo,
  refuse: (why: string) => number,
): Promise<number | undefined> {
  const { processInput } = await import('../pipeline/process-input.js');
  for (const p of inputs) {
    let said = '';
    const onOutcome = (o: InputOutcome) => {
      said = formatInputOutcome(o, 'plan');
    };
    const ctx = { ...context, command: 'plan' as const, planned: checkOf(p), keepJobs: false, hooks: { onOutcome } };
    const o = await processInput(p.file, ctx);
    if (o.status === 'invalid' || o.status === 'unreadable' || o.status === 'unavailable') {
      io.stderr.write(said);
      return o.status === 'unavailable'
        ? ExitCode.Unavailable
        : refuse(`${p.file} no longer matches the plan (see above)`);
    }
  }
  return undefined;
}

/** A plan this large is not one `plan --out` wrote (about 150 bytes per job). */
const MAX_PLAN_BYTES = 128 * 1024 * 1024;

/** How far ahead of this machine's clock a plan's `createdAt` may be: another host's clock may run a little fast. */
const CLOCK_SKEW_MS = 5 * 60_000;

/**
 * Why a plan of `createdAt` no longer holds at `nowMs`: older than `maxAgeHours`, or from the
 * future — a plan dated ahead would never grow old, so it is refused too — or undefined.
 */
export function planAgeProblem(createdAt: string, nowMs: number, maxAgeHours: number): string | undefined {
  const at = Date.parse(createdAt);
  if (!Number.isFinite(at)) return `its createdAt "${createdAt}" is not a date`;
  if (at - nowMs > CLOCK_SKEW_MS)
    return `the plan says it was made at ${createdAt}, later than now (${new Date(nowMs).toISOString()}); make it again with htorder plan --out`;
  if (nowMs - at > maxAgeHours * HOUR_MS) return `the plan is from ${createdAt}, older than --max-age ${maxAgeHours} h`;
  return undefined;
}

/**
 * The plan file's text, if it can be trusted: a plan decides what is sent, so, as for config
 * files, one that is not the user's own (nor its symbolic link), or that group or others may
 * write, is refused. Checked on the descriptor that is read, so a name swapped after the check
 * is not read instead; bounded.
 */
async function readPlanFile(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const [target, link] = await Promise.all([handle.stat(), lstat(path)]);
    if (!target.isFile()) throw new Error('is not a regular file');
    if (!link.isSymbolicLink() && (link.ino !== target.ino || link.dev !== target.dev))
      throw new Error('changed while it was opened');
    const why = ownershipProblem(target, link);
    if (why !== undefined)
      throw new Error(
        `refusing the plan: ${why}. A plan decides what is sent: make it yours and private (chown, chmod go-w)`,
      );
    if (target.size > MAX_PLAN_BYTES) throw new Error(`is larger than ${MAX_PLAN_BYTES} bytes: not a plan`);
    const buffer = Buffer.alloc(target.size);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The plan file, checked for the shape apply relies on (schemas/plan.schema.json). */
function parsePlan(text: string): SavedPlan {
  const plan = JSON.parse(text) as SavedPlan;
  const ok =
    plan?.planVersion === 1 &&
    typeof plan.account === 'string' &&
    typeof plan.createdAt === 'string' &&
    Array.isArray(plan.inputs) &&
    plan.inputs.every(
      (i) =>
        typeof i?.file === 'string' &&
        typeof i.sha256 === 'string' &&
        Array.isArray(i.jobs) &&
        i.jobs.every((j) => typeof j?.orderNumber === 'string' && typeof j.request === 'string'),
    );
  if (!ok) throw new Error('not an htorder plan (planVersion 1): write one with htorder plan --out');
  return plan;
}
