import {
  closeSync,
  fstatSync,
  fsync,
  ftruncateSync,
  unlink,
  linkSync,
  lstatSync,
  open,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { temporaryName } from '../atomic-write.js';
import { ownedName } from '../lease.js';

interface Spares {
  /** Detached by a rename that a folder fsync has since made durable: safe to write into. */
  ready: string[];
  /** Detached by a rename that may not be on disk yet (see write). */
  pending: string[];
  /** The folder fsync under way, if any: resolves once it has put its batch back. */
  syncing?: Promise<void>;
}

/**
 * Writes ledger entries atomically — a reader sees the old entry or the new one, never a torn
 * one — as writeFileAtomic does (a temp file, fsync when durable, rename over the entry), but
 * without creating a new inode for each write once it is warm.
 *
 * Why: creating a file is by far the dearest thing the file system does for an order (0.6–0.8
 * ms of kernel CPU on an ext4 without a journal, against tens of µs for a rename or a link),
 * and each order's intent and outcome made one each. Here the entry being replaced is not
 * freed: before the rename, a second name (a "spare", `<folder>/.locks/…spare`) is linked to
 * it, and the spare is the temp file of a later durable write (an intent): overwritten,
 * truncated, fsynced, renamed over its entry. A spare is reused only when this process made it and its
 * inode has no other name (fstat's link count is 1), so nothing anyone can read is ever written
 * in place. A crash leaves at most a few spares; each is just another name of an old entry or
 * an unreachable old version, and a later process on this host removes those of dead processes.
 *
 * The calls are synchronous (microseconds each) except the two that wait: the fsync of a durable
 * write and the creation of a temp file while no spare is at hand, which go to the thread pool.
 */
export class EntryWriter {
  private readonly spares = new Map<string, Spares>();
  /** Folders whose file system refused a hard link: plain temp files there. */
  private readonly noLinks = new Set<string>();
  private counter = 0;
  private readonly prefix = ownedName();

  /**
   * At most `maxSpares` spares per folder (more are unlinked), and a folder fsync once
   * `syncEvery` are pending.
   */
  constructor(
    private readonly maxSpares = 64,
    private readonly syncEvery = 8,
  ) {}

  /**
   * Only a durable write goes into a spare, and only into one whose detaching rename a folder
   * fsync has made durable. Both for the same reason: after a power cut, a name must never lead
   * to a spare's old content (an older version of some other order's entry). A durable write's
   * data is on disk before its rename; and a spare still attached on disk to its old name (its
   * rename lost) would turn that name into this write's entry. A write that is not durable (an
   * outcome) takes a new temp file, as writeFileAtomic does.
   */
  async write(path: string, data: string, durable: boolean): Promise<void> {
    const dir = dirname(path);
    const bytes = Buffer.from(data);
    let temp = durable ? this.takeSpare(dir) : undefined;
    let fd: number;
    if (temp) {
      fd = temp.fd;
    } else {
      const tmp = temporaryName(path);
      fd = await new Promise<number>((resolve, reject) =>
        open(tmp, 'wx', (err, f) => (err ? reject(err) : resolve(f))),
      );
      temp = { path: tmp, fd };
    }
    let keep: string | undefined;
    try {
      try {
        for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, done);
        ftruncateSync(fd, bytes.length);
        if (durable) await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
      } finally {
        closeSync(fd);
      }
      keep = this.keepReplaced(path);
      renameSync(temp.path, path);
    } catch (err) {
      // Never pool a name that may still lead to the live entry.
      if (keep) rmSync(keep, { force: true });
      rmSync(temp.path, { force: true });
      throw err;
    }
    if (keep) this.pool(dir, keep);
  }

  /** A spare of this folder opened for writing, or undefined when none is usable. */
  private takeSpare(dir: string): { path: string; fd: number } | undefined {
    const spares = this.spares.get(dir);
    if (!spares) return undefined;
    if (spares.pending.length >= this.syncEvery && spares.syncing === undefined) this.syncFolder(dir, spares);
    const list = spares.ready;
    for (let spare = list.pop(); spare !== undefined; spare = list.pop()) {
      let fd: number | undefined;
      try {
        fd = openSync(spare, 'r+');
        // Only ours and unreachable otherwise: then writing into it is invisible to everyone.
        if (fstatSync(fd).nlink === 1) return { path: spare, fd };
        closeSync(fd);
        unlinkSync(spare);
      } catch {
        if (fd !== undefined) closeSync(fd);
        // Gone (its folder was removed): forget it.
      }
    }
    return undefined;
  }

  /** Links a spare name to the entry about to be replaced (none for a new entry). */
  private keepReplaced(path: string): string | undefined {
    const dir = dirname(path);
    const spares = this.spares.get(dir);
    if (this.noLinks.has(dir) || (spares ? spares.ready.length + spares.pending.length : 0) >= this.maxSpares) {
      return undefined;
    }
    // A new entry has nothing to keep: asked without the exception a failed link would throw.
    if (!lstatSync(path, { throwIfNoEntry: false })) return undefined;
    const spare = join(dir, '.locks', `${this.prefix}~${++this.counter}.spare`);
    try {
      linkSync(path, spare);
      return spare;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ENOENT: a new entry (nothing to keep) or no .locks folder yet; others: no hard links here.
      if (code !== 'ENOENT') this.noLinks.add(dir);
      return undefined;
    }
  }

  private pool(dir: string, spare: string): void {
    const spares = this.spares.get(dir);
    if (spares) spares.pending.push(spare);
    else this.spares.set(dir, { ready: [], pending: [spare] });
  }

  /**
   * fsyncs the folder (on the thread pool, not waited for): the renames that detached the
   * pending spares are then on disk, and the spares ready. One fsync per `syncEvery` orders.
   */
  private syncFolder(dir: string, spares: Spares): void {
    const batch = spares.pending.splice(0);
    let finished = (): void => undefined;
    spares.syncing = new Promise((resolve) => {
      finished = resolve;
    });
    open(dir, 'r', (err, fd) => {
      const done = (ok: boolean) => {
        spares.syncing = undefined;
        if (ok) spares.ready.push(...batch);
        else {
          // A folder that cannot be fsynced (some platforms): no spares there.
          this.noLinks.add(dir);
          for (const spare of batch) rmSync(spare, { force: true });
        }
        finished();
      };
      if (err) return done(false);
      fsync(fd, (syncErr) => {
        closeSync(fd);
        done(!syncErr);
      });
    });
  }

  /**
   * Gives every spare back to the file system now, off the main thread (the thread pool's
   * unlinks, side by side), for a caller that writes no more for a while: `run`, after its
   * last input's last ledger write, while the reports are written, instead of one by one on
   * the way out (4-15 ms of exit for the ~30 spares of a 1,000-order run, issue 16). Writing
   * again afterwards just starts a new pool. Resolves when all are gone; never rejects.
   */
  async release(): Promise<void> {
    const all = [...this.spares.values()];
    // A folder fsync under way puts its batch back into `ready` when it ends: wait for it.
    await Promise.all(all.map((s) => s.syncing));
    const names = all.flatMap((s) => s.ready.splice(0).concat(s.pending.splice(0)));
    await Promise.all(names.map((name) => new Promise<void>((resolve) => unlink(name, () => resolve()))));
  }

  /** Removes this process's spares (on exit; they are only names of old versions). */
  cleanUp(): void {
    for (const spares of this.spares.values()) {
      for (const spare of [...spares.ready, ...spares.pending]) rmSync(spare, { force: true });
    }
    this.spares.clear();
  }
}
