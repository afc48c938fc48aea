import { realpath } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { OpenPipeline } from '../app/pipeline-context.js';
import { storeUnavailable } from '../api/errors.js';
import { ExitCode } from '../core/errors.js';
import { printable } from '../core/printable.js';
import { folderMark, type LedgerMark, runRefusal } from '../storage/ledger/ledger-mark.js';
import type { CommandIo } from './command-io.js';

/** The commands that send a file's orders: each says the fix with its own name. */
export type SendingCommand = 'run' | 'apply';

/**
 * The exit code when an input lies in a drop folder marked as another ledger's
 * (dropLedgerProblems), each one said; exit 3 when the ledger's id cannot be read (its database
 * away). Undefined: the inputs may be sent. The caller closes `pipeline` whatever happens.
 */
export async function refusedByDropLedger(
  files: readonly string[],
  pipeline: OpenPipeline & { ledgerWhere: string },
  io: Pick<CommandIo, 'stderr' | 'cwd'>,
  command: SendingCommand,
): Promise<number | undefined> {
  const ledger = { id: () => pipeline.ledger.ledgerId(), where: pipeline.ledgerWhere };
  try {
    const problems = await dropLedgerProblems(files, ledger, io.cwd, command);
    for (const problem of problems) io.stderr.write(`htorder ${command}: ${printable(problem)}\n`);
    return problems.length === 0 ? undefined : ExitCode.Usage;
  } catch (err) {
    const away = storeUnavailable(err);
    if (away === undefined) throw err;
    io.stderr.write(`htorder ${command}: ${printable(away)}\n`);
    return ExitCode.Unavailable;
  }
}

/**
 * Why `run` (or `apply`) may not send the inputs' orders with its ledger, one line per input refused: an
 * input at the top of a drop folder, or in one of its sub-folders (processing/, done/, failed/,
 * held/, whatever their names), that a watcher marked as another ledger's. The folder's mark is
 * read only where one is; the run's ledger id is asked for only when a mark is found.
 */
export async function dropLedgerProblems(
  files: readonly string[],
  ledger: LedgerMark,
  cwd: string,
  command: SendingCommand = 'run',
): Promise<string[]> {
  const marks = new Map<string, Awaited<ReturnType<typeof folderMark>>>();
  const markOf = async (folder: string) => {
    if (!marks.has(folder)) marks.set(folder, await folderMark(folder));
    return marks.get(folder);
  };
  let id: string | undefined;
  const problems: string[] = [];
  for (const file of files) {
    const path = await realpath(resolve(cwd, file)).catch(() => resolve(cwd, file));
    for (const folder of [dirname(path), dirname(dirname(path))]) {
      const mark = await markOf(folder);
      if (mark === undefined) continue;
      id ??= await ledger.id();
      if (mark?.ledgerId !== id) problems.push(runRefusal(file, folder, mark, { where: ledger.where, id }, command));
      break;
    }
  }
  return problems;
}
