import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rename, rm, truncate, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportPaths } from '../report/report-paths.js';
import { nameOwnerDead, ownedName } from '../storage/lease.js';

const PREFIX = 'htorder-watch-';

/**
 * The private folder (0700, this process's own, made with mkdtemp) where a source keeps the
 * local copies of the inputs it claimed, inside `workDir` — the state directory's `work/` in
 * `watch`, so copies of customers' orders stay beside the state they belong to, not in a
 * shared temporary folder — or the system's temporary folder when none is given. Its name says
 * which process made it (`htorder-watch-<host>~<pid>~…`): the folders of processes of this host
 * that are gone (killed, so never closed) are removed first, by the rule a claim's lease is
 * judged by.
 */
export async function makeWorkFolder(workDir: string | undefined): Promise<string> {
  const root = workDir ?? tmpdir();
  await mkdir(root, { recursive: true, mode: 0o700 });
  for (const name of await readdir(root)) {
    if (name.startsWith(PREFIX) && nameOwnerDead(name.slice(PREFIX.length)))
      await rm(join(root, name), { recursive: true, force: true });
  }
  return mkdtemp(join(root, `${PREFIX}${ownedName()}~`));
}

/** The work folder `init()` made; claiming before it is a programming error, never the shared temporary folder. */
export function initialised(work: string | undefined): string {
  if (work === undefined) throw new Error('the drop source was not initialised (init() makes its work folder)');
  return work;
}

/** The name of a slot's kept file while it holds no copy (hidden: never an input's name). */
const SPARE = '.copy';

/** Opens the kept file for writing without creating it: no link followed, emptied first. */
const OPEN_KEPT = constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW;

/**
 * The folders of a work folder where claimed inputs' private copies are made. An input in
 * flight holds one slot and gives it back when its copy is dropped, so folders are made once,
 * not per input; and each slot keeps one 0600 file for its life: a copy is written into it (no
 * new inode per input: making one costs kernel time, and freed ones slow later makes for
 * minutes on some file systems), then renamed to the input's name, which errors.txt names
 * the input by; dropped, it is emptied (no customer's bytes kept) and renamed back.
 */
export class WorkSlots {
  private readonly free: string[] = [];
  private count = 0;

  /** One input's use of a slot folder: a new Slot each time, so a late drop() of an earlier input is a no-op. */
  async take(work: string): Promise<Slot> {
    let dir = this.free.pop();
    if (dir === undefined) {
      dir = join(work, `in-${this.count++}`);
      await mkdir(dir, { mode: 0o700 });
    }
    return new Slot(dir, (d) => this.free.push(d));
  }
}

export class Slot {
  /** The input's name while its copy is in the slot. */
  private named: string | undefined;
  private written = false;
  private dropped = false;

  constructor(
    readonly dir: string,
    private readonly giveBack: (dir: string) => void,
  ) {}

  /** Where the copy of input `name` is read from once `place(name)` was called. */
  pathFor(name: string): string {
    return join(this.dir, name);
  }

  /** The kept file, emptied and open for writing a copy (made 0600 the first time). */
  async open(): Promise<FileHandle> {
    const spare = join(this.dir, SPARE);
    this.written = true;
    try {
      return await open(spare, OPEN_KEPT);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return await open(spare, 'wx', 0o600);
    }
  }

  /** The copy written: it takes the input's name. */
  async place(name: string): Promise<string> {
    await rename(join(this.dir, SPARE), this.pathFor(name));
    this.named = name;
    return this.pathFor(name);
  }

  /**
   * Empties the kept file, removes the reports written beside the copy and puts the file back
   * under its spare name; the folder is free for another input. Only the first call acts.
   */
  async drop(): Promise<void> {
    if (this.dropped) return;
    this.dropped = true;
    const at = this.named === undefined ? join(this.dir, SPARE) : this.pathFor(this.named);
    try {
      if (this.named !== undefined)
        await Promise.all(Object.values(reportPaths(at)).map((r) => rm(r, { force: true })));
      if (this.written) await truncate(at, 0);
      if (this.named !== undefined) await rename(at, join(this.dir, SPARE));
    } catch (err) {
      // Gone or odd: the next copy makes a new kept file.
      if (this.named !== undefined) await rm(at, { force: true });
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    } finally {
      this.giveBack(this.dir);
    }
  }
}
