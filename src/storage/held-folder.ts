import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** O_DIRECTORY | O_NOFOLLOW: a link or a file at the folder's name is refused, never followed. */
const OPEN_FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A folder's identity: what the name must still lead to. */
export interface Identity {
  dev: number;
  ino: number;
}

export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * A folder held open by its identity, where someone else may rename its name (a drop folder's
 * `done/` swapped with a symbolic link to a folder of ours). Node has no openat; on Linux,
 * `/proc/self/fd/N/NAME` is resolved from the held folder itself, never from its path, so a
 * file created or renamed through `at(NAME)` lands in that folder whatever its name leads to
 * now. Where /proc is missing, `at` is the plain path, and `check` (the name still leads to the
 * held folder, compared by device and inode) after each act is what catches a swap.
 */
export class HeldFolder {
  private constructor(
    /** The folder's path, for people and for `check`. */
    readonly path: string,
    private readonly handle: FileHandle,
    readonly identity: Identity,
    /** Whether names resolve inside the held folder (/proc): then a swap of its name cannot redirect an act. */
    readonly pinned: boolean,
  ) {}

  /**
   * Makes the folder at `path` where none is, and opens it; why not, when something else is
   * there. It must be a real folder: one who may write its parent could otherwise pre-create it
   * as a symbolic link and have every file moved through it wherever it points (mkdir -p
   * accepts an existing link, so lstat says). mkdir -p throws on a file, a link to one or a
   * dangling link at the name: what is there is then the answer, not mkdir's error.
   */
  static async make(path: string): Promise<HeldFolder | string> {
    const failed = await mkdir(path, { recursive: true }).then(
      () => undefined,
      (err: unknown) => err,
    );
    const info = await lstat(path).catch(() => undefined);
    if (info?.isSymbolicLink()) return 'is a symbolic link; refusing to move files through it (make it a real folder)';
    if (info !== undefined && !info.isDirectory()) return 'is not a folder';
    if (failed !== undefined) throw failed;
    return (info?.isDirectory() && (await HeldFolder.open(path))) || 'is not a folder';
  }

  /** Opens the folder at `path` (never through a link); undefined when it is not a folder. */
  static async open(path: string): Promise<HeldFolder | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(path, OPEN_FOLDER);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') return undefined;
      throw err;
    }
    let info: Stats;
    try {
      info = await handle.stat();
    } catch (err) {
      await handle.close();
      throw err;
    }
    const proc = `/proc/self/fd/${handle.fd}`;
    // The handle's own entry in /proc leads to the held folder: then names are resolved from it.
    const viaProc = await stat(proc).then(
      (p) => sameIdentity(p, info),
      () => false,
    );
    return new HeldFolder(path, handle, { dev: info.dev, ino: info.ino }, viaProc);
  }

  /** The path to act on `name` inside the held folder (the folder itself when `name` is empty). */
  at(name = ''): string {
    const base = this.pinned ? `/proc/self/fd/${this.handle.fd}` : this.path;
    return name === '' ? base : join(base, name);
  }

  /**
   * Whether what was just read or done through `at()` was inside the held folder: always where
   * names are pinned, otherwise when `path` still leads to it.
   */
  async stillHeld(): Promise<boolean> {
    return this.pinned || (await this.intact());
  }

  /** Whether `path` still leads to the held folder itself (lstat: a link there is a swap). */
  async intact(): Promise<boolean> {
    const now: Stats | undefined = await lstat(this.path).catch(() => undefined);
    return now?.isDirectory() === true && sameIdentity(now, this.identity);
  }

  /** Whether the entry `name` of the held folder is the file `expected` (same device and inode). */
  async holds(name: string, expected: Identity): Promise<boolean> {
    const now = await lstat(this.at(name)).catch(() => undefined);
    return now !== undefined && sameIdentity(now, expected);
  }

  /** The held folder's own metadata (its mode and group), read through the handle. */
  stats(): Promise<Stats> {
    return this.handle.stat();
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
