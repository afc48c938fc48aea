import { basename, resolve } from 'node:path';
import type { CommandIo } from './command-io.js';
import { openPipelineContext } from '../app/pipeline-context.js';
import { unavailableReason } from '../api/errors.js';
import type { ConfigFlags } from '../core/config/resolve-config.js';
import { notifyWebhooks } from '../core/config/notify-config.js';
import type { InputOutcome, PipelineCommand, PipelineContext } from '../pipeline/process-input.js';
import { ExitCode, UsageError } from '../core/errors.js';
import type { Notifier } from '../watch/notify/notifier.js';
import { printable } from '../core/printable.js';
import { formatInputOutcome } from './format-outcome.js';
import { JsonJobRows } from './json-job-rows.js';
import { exitCodeOf, jsonSummary, pipelineDetails, pipelineHead, pipelineJob } from './json-summary.js';
import { createProgress } from './progress.js';
import { refusedByDropLedger } from './drop-ledger.js';
import { leaveOutReports, planOutProblem, reportNamesFit } from './report-inputs.js';
import type { SandboxOptions } from './help.js';
import type { SavedInput } from './saved-plan-command.js';

export interface PipelineCommandInput extends Partial<SandboxOptions> {
  command: PipelineCommand;
  files: string[];
  mapping?: string;
  partial?: boolean;
  json?: boolean;
  /** plan: write the saved plan here (`htorder apply` sends exactly it). */
  out?: string;
  flags: ConfigFlags;
}

/**
 * `htorder plan|run FILE...`, the command-line side: progress, the summary of each input, the
 * `--json` summary and the exit code (docs/commands.md#exit-codes). The wiring (session,
 * ledger, one catalogue for the whole run, the account key) is the app's
 * openPipelineContext; inputs are processed one after another, jobs of an input concurrently.
 */
export async function runPipelineCommand(input: PipelineCommandInput, io: CommandIo): Promise<number> {
  // A broken mapping is a usage error (exit 2) before anything is sent.
  // Loaded only with --mapping: most inputs need no mapping (and not its CSV and jsonata code).
  const mapping = input.mapping
    ? await (await import('../manifest/mapping/load-mapping.js')).loadMapping(input.mapping)
    : undefined;
  // Last night's reports beside tonight's input (a cron's glob) are left out, each said once.
  const { inputs: files, skipped } = leaveOutReports(input.files, input.command, io.stderr);
  // Report paths are checked before anything is sent: an input whose reports cannot be written is a usage error.
  if (!reportNamesFit(files, input.command, io.stderr)) return ExitCode.Usage;
  const outProblem = input.out === undefined ? undefined : planOutProblem(input.out, files);
  if (outProblem !== undefined) {
    io.stderr.write(
      `htorder ${input.command}: --out ${printable(input.out as string)} ${outProblem}; nothing was sent\n`,
    );
    return ExitCode.Usage;
  }
  const pipeline = await openPipelineContext({ ...input, mapping, env: io.env, cwd: io.cwd, stderr: io.stderr });
  // A drop folder's files are its watcher's to send, through the ledger its mark names: run
  // sends one only through that same ledger, or the watcher could send its orders again.
  const refused =
    input.command === 'run'
      ? await refusedByDropLedger(files, pipeline, io, 'run').catch(async (err: unknown) => {
          await pipeline.close();
          throw err;
        })
      : undefined;
  if (refused !== undefined) {
    await pipeline.close();
    return refused;
  }
  const outcomes: InputOutcome[] = [];
  // --json lists every job: each input's rows wait in a file, not in memory (json-job-rows.ts).
  const rows = input.json && files.length > 0 ? await JsonJobRows.open() : undefined;
  const finish = async (): Promise<number> => {
    const exitCode = exitCodeOf(outcomes);
    if (rows)
      await rows.write(io.stdout, jsonSummary(input.command, outcomes, exitCode, pipelineHead, skipped), outcomes);
    else if (input.json)
      io.stdout.write(`${JSON.stringify(jsonSummary(input.command, outcomes, exitCode, pipelineDetails, skipped))}\n`);
    return exitCode;
  };
  if (files.length === 0) {
    // Only reports were given: the settings are checked, and there is nothing to ask the API.
    await pipeline.close();
    return finish();
  }
  try {
    return await runInputs(input, io, { files, pipeline, outcomes, rows, finish });
  } finally {
    await rows?.close();
  }
}

type OpenedPipeline = Awaited<ReturnType<typeof openPipelineContext>>;

/** What runInputs works with: the inputs, the pipeline, where outcomes go, and how the command ends. */
interface InputsRun {
  files: readonly string[];
  pipeline: OpenedPipeline;
  outcomes: InputOutcome[];
  rows: JsonJobRows | undefined;
  finish: () => Promise<number>;
}

/** Each input in turn, after the token and the account are known; then the day's upkeep and plan --out. */
async function runInputs(
  input: PipelineCommandInput,
  io: CommandIo,
  { files, pipeline, outcomes, rows, finish }: InputsRun,
): Promise<number> {
  // run (a nightly cron's command) tells the same webhooks as watch (docs/notifications.md).
  let notifier: Notifier | undefined;
  try {
    const { settings, logger } = pipeline.session;
    // Read before anything is sent: a broken webhook setting is a usage error (exit 2).
    const tellWebhooks = input.command === 'run' && notifyWebhooks(settings).length > 0;
    // The token and account requests go first: the pipeline's code is loaded, and the first
    // input read and checked (CPU: the YAML parse of a big manifest) and its report begun,
    // while they are in flight, instead of after their answers. Reading sends nothing, and
    // nothing is sent for the input before its context is known.
    const learning = pipeline.context();
    learning.catch(() => undefined);
    const first = pipeline.prepare(files[0] as string);
    first.catch(() => undefined);
    const { processInput, processPrepared, releasePrepared } = await import('../pipeline/process-input.js');
    // The webhook code only when there is a webhook to tell.
    if (tellWebhooks) notifier = (await import('../watch/notify/notifier.js')).notifierFor(settings, logger, 'run');
    let context: PipelineContext;
    try {
      context = await learning;
    } catch (err) {
      // The first input, read meanwhile, is not processed: its file is let go once it is read.
      void first.then(releasePrepared, () => undefined);
      // A setting only read now is still the user's to fix (exit 2), not an outage.
      if (err instanceof UsageError) throw err;
      const why = unavailableReason(err);
      io.stderr.write(`htorder ${input.command}: ${printable(why)}\n`);
      notifier?.apiUnreachable(why);
      return ExitCode.Unavailable;
    }
    const progress = createProgress(io.stderr, input.command);
    // plan --out's code only when there is a plan to save.
    const saving =
      input.command === 'plan' && input.out !== undefined ? await import('./saved-plan-command.js') : undefined;
    const planned: SavedInput[] = [];
    for (const [i, file] of files.entries()) {
      // The input's summary is told, its --json rows written and what plan --out saves of it
      // taken, while its report's jobs can still be read: afterwards they are let go.
      const onOutcome = async (outcome: InputOutcome) => {
        progress.clear();
        io.stderr.write(formatInputOutcome(outcome, input.command));
        await rows?.add(outcome, pipelineJob);
        const saved = saving?.plannedInputOf(outcome);
        if (saved) planned.push(saved);
      };
      const hooks = { onProgress: progress.update, onOutcome };
      const ctx: PipelineContext = { ...context, keepJobs: false, savesPlan: saving !== undefined, hooks };
      const outcome = await (i === 0 ? processPrepared(await first, ctx) : processInput(file, ctx));
      outcomes.push(outcome);
      notifier?.runOutcome(resolve(file), outcome.status, outcome.report?.summary, problemOf(outcome, file));
    }
    // After the inputs: a day's upkeep of the ledger never holds up an order.
    if (input.command === 'run') await pipeline.upkeep();
    if (saving !== undefined && input.out !== undefined) {
      const out = input.out;
      // A plan that cannot be written is said as such (the folder checked at start may have gone).
      const plan = await saving.writeSavedPlan(out, context.account, planned, context.clock).catch((err: unknown) => {
        const code = (err as NodeJS.ErrnoException).code ?? 'error';
        throw new UsageError(`plan: cannot write the plan to ${printable(out)} (${code}); nothing was sent`);
      });
      io.stderr.write(saving.planSummary(input.out, plan, context.guard));
    }
  } finally {
    await notifier?.close();
    await pipeline.close();
  }
  return finish();
}

/** What an input's alert says went wrong: an invalid input's first errors, a held one's reasons its jobs wait. */
function problemOf(outcome: InputOutcome, file: string): string | undefined {
  if (outcome.problem !== undefined || !outcome.quotes) return outcome.problem;
  if (outcome.status === 'invalid') return outcome.quotes.firstErrors(basename(file));
  return outcome.status === 'held' ? outcome.quotes.heldReasons(basename(file)) : undefined;
}
