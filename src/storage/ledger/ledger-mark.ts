import { join } from 'node:path';
import { readSmallFile } from '../drop-files.js';
import { HOST } from '../lease.js';

/** The mark's name, at the top of a drop folder or prefix: hidden, so never taken as an input. */
export const LEDGER_MARK = '.htorder-ledger';

/** Why a location's mark refuses a watcher: `taken` by another ledger (fix the command), or `unsettled` (retry later). */
export interface MarkRefusal {
  kind: 'taken' | 'unsettled';
  why: string;
}

/** The ledger a watcher writes to, which marks its drop location. */
export interface LedgerMark {
  /** The ledger's own id (LedgerStore.ledgerId), kept in the ledger. */
  id(): Promise<string>;
  /** Where the ledger is, for people: a state dir, a bucketLedger prefix, a database. */
  where: string;
  /** Rewrite the mark of another ledger (`watch --replace-ledger`). */
  replace?: boolean;
}

/** What a mark says (one line of JSON). */
export interface Mark {
  ledgerId: string;
  ledger: string;
  host: string;
  since: string;
}

/**
 * Marks `location` (a watcher's drop folder or prefix) as `ledger`'s, or checks that it is:
 * watchers of one drop location must share one ledger, or an input a killed watcher left in
 * processing/ is resumed by a watcher whose ledger never saw its intents — and its orders are
 * sent again. The first watcher writes the mark where none is (exclusively: of two starting at
 * once, one writes it, the other reads it); a watcher of another ledger is refused, unless
 * `replace`. Undefined when the location is `ledger`'s.
 */
export async function markFor(
  ledger: LedgerMark,
  location: string,
  replace: boolean,
  io: { read(): Promise<string | undefined>; write(text: string, replace: boolean): Promise<boolean> },
): Promise<MarkRefusal | undefined> {
  const id = await ledger.id();
  const mine: Mark = { ledgerId: id, ledger: ledger.where, host: HOST, since: new Date().toISOString() };
  const text = `${JSON.stringify(mine)}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = await io.read();
    if (found === undefined) {
      if (await io.write(text, false)) return undefined;
      continue;
    }
    const mark = parseMark(found);
    if (mark?.ledgerId === id) return undefined;
    if (!replace) return { kind: 'taken', why: refusal(location, mark, mine) };
    await io.write(text, true);
    return undefined;
  }
  return { kind: 'unsettled', why: `${location}: its ${LEDGER_MARK} keeps appearing and disappearing` };
}

/**
 * The mark at the top of the folder `folder`: undefined when there is none (no watcher ever
 * took the folder, or `folder` is no folder: a path through a file), null when the file there
 * is not one htorder wrote or cannot be read (which ledger it names is then unknown).
 */
export async function folderMark(folder: string): Promise<Mark | null | undefined> {
  const text = await readSmallFile(join(folder, LEDGER_MARK), 4096).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOTDIR') return undefined;
    if (err.code === 'EACCES' || err.code === 'EPERM') return '';
    throw err;
  });
  return text === undefined ? undefined : (parseMark(text) ?? null);
}

/**
 * Why `htorder run` may not send `file`'s orders: it lies in `folder` (or one of its
 * sub-folders), a drop folder whose mark names another ledger than the run's (`mine`, with its
 * id). A watcher of that folder takes its files and sends through its own ledger, so a run
 * keeping another ledger could send the same orders a second time. The fix names the
 * folder's ledger the way run takes it: a database by --ledger-url, a state dir by --state-dir.
 */
export function runRefusal(
  file: string,
  folder: string,
  mark: Mark | null,
  mine: { where: string; id: string },
  command = 'run',
): string {
  const theirs = mark
    ? `its ${LEDGER_MARK} names ${mark.ledger} (ledger ${mark.ledgerId}, marked by ${mark.host} at ${mark.since})`
    : `its ${LEDGER_MARK} is not one htorder wrote, so the ledger its watchers keep is unknown`;
  const fix = mark
    ? `run it with the folder's ledger (htorder ${command} ${mark.ledger.startsWith('postgres://') ? '--ledger-url' : '--state-dir'} ${mark.ledger} …), or leave it to the folder's watcher`
    : `leave it to the folder's watcher, or run a copy of it kept outside the drop folder once you know its orders were never sent`;
  return (
    `${file} is in the drop folder ${folder}: ${theirs}, and this run's ledger is ${mine.where} (ledger ${mine.id}). ` +
    `A watcher of that folder sends its files' orders through its own ledger, so this run could send them a second time. ` +
    `Fix: ${fix}; nothing was sent (docs/watch.md#running-a-file-of-a-drop-folder)`
  );
}

function parseMark(text: string): Mark | undefined {
  try {
    const m = JSON.parse(text) as Partial<Mark>;
    const fields = [m.ledgerId, m.ledger, m.host, m.since];
    return fields.every((f) => typeof f === 'string') ? (m as Mark) : undefined;
  } catch {
    return undefined;
  }
}

function refusal(location: string, mark: Mark | undefined, mine: Mark): string {
  const theirs = mark
    ? `is watched with another ledger: its ${LEDGER_MARK} names ${mark.ledger} (ledger ${mark.ledgerId}, marked by ${mark.host} at ${mark.since})`
    : `holds a ${LEDGER_MARK} htorder did not write`;
  return (
    `${location} ${theirs}, and this watcher's ledger is ${mine.ledger} (ledger ${mine.ledgerId}). ` +
    'Watchers of one drop location must share one ledger, or an order one of them sent can be sent again by ' +
    'another after a crash. Fix: give this watcher the same ledger (the same stateDir, a shared folder for ' +
    'several hosts; the same bucketLedger or database), or, if this ledger replaces that one (the state dir ' +
    'moved, or was imported into a database) and no watcher of the old one runs any more, start this watcher ' +
    'once with --replace-ledger (docs/watch.md#sharing-a-drop-folder)'
  );
}
