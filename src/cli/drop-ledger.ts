import { realpath } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { folderMark, type LedgerMark, runRefusal } from '../storage/ledger/ledger-mark.js';

/**
 * Why `run` may not send the inputs' orders with its ledger, one line per input refused: an
 * input at the top of a drop folder, or in one of its sub-folders (processing/, done/, failed/,
 * held/, whatever their names), that a watcher marked as another ledger's. The folder's mark is
 * read only where one is; the run's ledger id is asked for only when a mark is found.
 */
export async function dropLedgerProblems(files: readonly string[], ledger: LedgerMark, cwd: string): Promise<string[]> {
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
      if (mark?.ledgerId !== id) problems.push(runRefusal(file, folder, mark, { where: ledger.where, id }));
      break;
    }
  }
  return problems;
}
