import type { ConfigFlags } from '../config/resolve-config.js';
import { FolderLedger } from '../ledger/folder-ledger.js';
import { loadMapping } from '../manifest/mapping/load-mapping.js';
import { processInput, type InputOutcome, type PipelineCommand } from '../pipeline/process-input.js';
import { createCatalogue } from '../resolve/catalogue.js';
import { openApiSession } from '../app/api-session.js';
import { ExitCode, UsageError } from '../errors.js';
import { formatInputOutcome, jsonSummary } from './format-outcome.js';
import { createProgress } from './progress.js';

export interface PipelineCommandInput {
  command: PipelineCommand;
  files: string[];
  mapping?: string;
  partial?: boolean;
  json?: boolean;
  sandbox?: boolean;
  account?: string;
  logLevel?: string;
  flags: ConfigFlags;
}

export interface PipelineIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
}

/**
 * `htorder plan|run FILE...`: one API session and one catalogue for the whole run (lookups
 * are shared by every input of one account), inputs processed one after another, jobs of an
 * input concurrently. Returns the exit code of docs/commands.md#exit-codes.
 */
export async function runPipelineCommand(input: PipelineCommandInput, io: PipelineIo): Promise<number> {
  // A broken mapping is a usage error (exit 2) before anything is sent.
  const mapping = input.mapping ? await loadMapping(input.mapping) : undefined;
  const session = await openApiSession({ ...input, env: io.env, cwd: io.cwd, stderr: io.stderr });
  const { client, config, logger } = session;
  const outcomes: InputOutcome[] = [];
  try {
    const catalogue = createCatalogue(client);
    let account: string;
    try {
      // The ledger is keyed by region and account id, so two credentials of one account
      // share it and two accounts never do.
      const profile = await catalogue.account();
      account = `${config.baseUrl}#${profile?.id ?? config.clientId}`;
    } catch (err) {
      io.stderr.write(`htorder ${input.command}: cannot reach the API or the credentials were refused: ${(err as Error).message}\n`);
      return ExitCode.Unavailable;
    }
    const staleMs = io.env.HTORDER_LOCK_STALE_MS === undefined ? undefined : Number(io.env.HTORDER_LOCK_STALE_MS);
    if (staleMs !== undefined && !(staleMs >= 2000)) throw new UsageError(`HTORDER_LOCK_STALE_MS must be a number of milliseconds >= 2000, got "${io.env.HTORDER_LOCK_STALE_MS}"`);
    const ledger = new FolderLedger(config.stateDir, { staleMs });
    const progress = createProgress(io.stderr, input.command);
    for (const file of input.files) {
      const outcome = await processInput(file, {
        command: input.command,
        partial: input.partial === true,
        concurrency: config.concurrency,
        mapping,
        client,
        catalogue,
        ledger,
        account,
        logger,
        onProgress: progress.update,
      });
      progress.clear();
      outcomes.push(outcome);
      io.stderr.write(formatInputOutcome(outcome, input.command));
    }
  } finally {
    await session.close();
  }
  const exitCode = exitCodeOf(outcomes);
  if (input.json) io.stdout.write(`${JSON.stringify(jsonSummary(input.command, outcomes, exitCode))}\n`);
  return exitCode;
}

export function exitCodeOf(outcomes: readonly InputOutcome[]): number {
  if (outcomes.some((o) => o.status === 'unreadable')) return ExitCode.Usage;
  if (outcomes.some((o) => o.status === 'unavailable')) return ExitCode.Unavailable;
  if (outcomes.some((o) => o.status === 'invalid')) return ExitCode.Invalid;
  return ExitCode.Ok;
}
