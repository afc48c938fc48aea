import { randomBytes } from 'node:crypto';
import {
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  utimesSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { linkRefused } from '../hard-links.js';
import { HOST, nameOwnerDead, ownedName } from '../lease.js';

/**
 * The ledger's cross-process lock on one order: `<entry>.json.lock` exists while someone holds
 * it. It is created atomically — a hard link to this process's token file — and a lock not
 * refreshed for `staleMs` belongs to a dead process and is taken over.
 *
 * Why a link: creating an inode (a file or a folder) is by far the dearest thing a file system
 * does here — 0.6–0.8 ms of kernel CPU each on an ext4 without a journal, against ~25 µs for a
 * link — and proper-lockfile's `mkdir` lock made one per order and deleted it again. `link` is
 * as atomic as `mkdir` (it fails when the name exists), on local disks and on NFS, where it is
 * the classic lock primitive. Every lock of a process is a name of the same inode (its token,
 * `<folder>/.locks/<host>~<pid>~<random>.token`), so refreshing the token's mtime refreshes all
 * of them at once, and each lock is checked by inode number: a lock name that no longer leads to
 * our token was taken over, and `assertHeld` refuses to go on. A file system without hard links
 * (some SMB shares) falls back to `mkdir`, as before.
 *
 * Shared with proper-lockfile (htorder before 0.2, which may still run on the same ledger):
 * the same path and the same mtime staleness, so each waits for the other's live locks.
 */
export interface DirLockOptions {
  /** A lock not refreshed for this long is stale (at least 2,000 ms). */
  staleMs: number;
  /** How long to wait for a live holder before giving up. */
  waitMs: number;
  /** Mode of the `.locks` folders it creates (before the umask). */
  mode?: number;
}

export interface HeldDirLock {
  /** Why the lock is no longer ours (taken over or removed), checked now; undefined while held. */
  lost(): Error | undefined;
  /** Removes the lock (unless it is no longer ours). */
  release(): void;
}

export class DirLockBusyError extends Error {
  override name = 'DirLockBusyError';
}

interface Token {
  path: string;
  ino: number;
  /** When this process last set the token's mtime. */
  refreshedAt: number;
}

interface Held {
  path: string;
  /** The inode the lock name must lead to: the token's, or the lock folder's (mkdir fallback). */
  ino: number;
  token: Token | undefined;
  /** mkdir fallback: the folder's mtime as we last set it (inode numbers of removed folders may be reused). */
  mtimeMs?: number;
}

export class DirLocks {
  private readonly staleMs: number;
  private readonly waitMs: number;
  private readonly mode: number | undefined;
  private readonly tokens = new Map<string, Token | null>();
  private readonly held = new Set<Held>();
  private timer: NodeJS.Timeout | undefined;

  constructor(options: DirLockOptions) {
    this.staleMs = Math.max(2000, options.staleMs);
    this.waitMs = options.waitMs;
    this.mode = options.mode;
  }

  /** Waits (with backoff, like proper-lockfile's retries) until `<path>.lock` is ours. */
  async acquire(path: string): Promise<HeldDirLock> {
    const lock = `${path}.lock`;
    const deadline = Date.now() + this.waitMs;
    let delay = 25;
    for (;;) {
      const held = this.tryAcquire(lock);
      if (held) return this.hold(held);
      const left = deadline - Date.now();
      if (left <= 0) throw new DirLockBusyError(`${lock} is held by a live process`);
      await sleep(Math.min(left, delay * (1 + Math.random())));
      delay = Math.min(500, delay * 1.2);
    }
  }

  private tryAcquire(lock: string): Held | undefined {
    // Two passes at most: the second after moving a stale lock out of the way.
    for (let pass = 0; pass < 2; pass++) {
      const made = this.create(lock);
      if (made) return made;
      if (pass === 1) return undefined;
      let stale: { ino: number; mtimeMs: number; dir: boolean };
      try {
        const s = lstatSync(lock);
        stale = { ino: s.ino, mtimeMs: s.mtimeMs, dir: s.isDirectory() };
      } catch (err) {
        if (code(err) === 'ENOENT') continue; // released meanwhile: try again at once
        throw err;
      }
      if (stale.mtimeMs >= Date.now() - this.staleMs) return undefined;
      this.removeStale(lock, stale);
    }
    return undefined;
  }

  /** Makes the lock name, or undefined when it exists. */
  private create(lock: string, retried = false): Held | undefined {
    const token = this.tokenFor(dirname(lock));
    if (token) {
      if (Date.now() - token.refreshedAt > this.staleMs / 4) this.refreshToken(token);
      try {
        linkSync(token.path, lock);
        return { path: lock, ino: token.ino, token };
      } catch (err) {
        if (code(err) === 'EEXIST') return undefined;
        if (code(err) === 'ENOENT' && !retried) {
          // The token went with its folder (`--sandbox-reset` removes an account's folder).
          this.tokens.delete(dirname(lock));
          return this.create(lock, true);
        }
        if (!linkRefused(err)) throw err;
        this.tokens.set(dirname(lock), null);
      }
    }
    try {
      mkdirSync(lock);
      const s = lstatSync(lock);
      return { path: lock, ino: s.ino, token: undefined, mtimeMs: s.mtimeMs };
    } catch (err) {
      if (code(err) === 'EEXIST') return undefined;
      throw err;
    }
  }

  /**
   * Removes a stale lock without removing a fresh one that replaced it meanwhile: the name is
   * first moved aside (atomic: only one remover gets it), and put back if what was moved is
   * not the stale lock that was seen.
   */
  private removeStale(lock: string, seen: { ino: number; mtimeMs: number; dir: boolean }): void {
    const aside = join(
      dirname(lock),
      `.${basename(lock)}.${HOST}.${process.pid}.${randomBytes(4).toString('hex')}.stale`,
    );
    try {
      renameSync(lock, aside);
    } catch (err) {
      if (code(err) === 'ENOENT') return;
      throw err;
    }
    const moved = lstatSync(aside);
    if (moved.ino !== seen.ino || moved.mtimeMs !== seen.mtimeMs) {
      // Someone's fresh lock: give it back (if the name is free; if not, its holder's
      // assertHeld sees that its lock no longer leads to its token and stops).
      try {
        if (moved.isDirectory()) renameSync(aside, lock);
        else linkSync(aside, lock);
      } catch {
        // The name was taken again meanwhile: see above.
      }
    }
    try {
      if (moved.isDirectory()) rmdirSync(aside);
      else unlinkSync(aside);
    } catch {
      // Put back by rename (a folder): nothing left to remove.
    }
  }

  private tokenFor(dir: string): Token | undefined {
    const known = this.tokens.get(dir);
    if (known !== undefined) return known ?? undefined;
    const tokens = join(dir, '.locks');
    mkdirSync(tokens, { recursive: true, ...(this.mode === undefined ? {} : { mode: this.mode }) });
    this.removeDeadTokens(tokens);
    const path = join(tokens, `${ownedName()}.token`);
    closeSync(openSync(path, 'wx'));
    const token = { path, ino: lstatSync(path).ino, refreshedAt: Date.now() };
    this.tokens.set(dir, token);
    cleanUpOnExit(this);
    return token;
  }

  /**
   * What processes that died without cleaning up (SIGKILL, power cut) left in `.locks`: tokens
   * not refreshed for staleMs (their locks were or will be taken over as stale), and spares
   * (entry-writer.ts) of dead processes of this host. Either is only another name of an inode.
   */
  private removeDeadTokens(tokens: string): void {
    for (const name of readdirSync(tokens)) {
      const path = join(tokens, name);
      try {
        if (name.endsWith('.token') && lstatSync(path).mtimeMs < Date.now() - this.staleMs) unlinkSync(path);
        if (name.endsWith('.spare')) {
          if (nameOwnerDead(name)) unlinkSync(path);
        }
      } catch {
        // Removed by another process meanwhile.
      }
    }
  }

  private refreshToken(token: Token): void {
    const now = new Date();
    utimesSync(token.path, now, now);
    token.refreshedAt = now.getTime();
  }

  private hold(held: Held): HeldDirLock {
    this.held.add(held);
    this.startRefreshing();
    let released = false;
    let lost: Error | undefined;
    const check = (): Error | undefined => {
      if (lost || released) return lost;
      lost = this.check(held);
      if (lost) this.forget(held);
      return lost;
    };
    return {
      lost: check,
      release: () => {
        if (released) return;
        if (check()) return;
        released = true;
        this.forget(held);
        try {
          if (held.token) unlinkSync(held.path);
          else rmdirSync(held.path);
        } catch {
          // Already removed by a stale takeover: the next holder decides.
        }
      },
    };
  }

  /** Why `held` is no longer ours: its name is gone or leads elsewhere, or it went stale. */
  private check(held: Held): Error | undefined {
    let ino: number;
    let mtimeMs: number;
    try {
      ({ ino, mtimeMs } = lstatSync(held.path));
    } catch (err) {
      return new Error(`the lock ${held.path} was removed (${code(err) ?? (err as Error).message})`);
    }
    if (ino !== held.ino || (held.mtimeMs !== undefined && mtimeMs !== held.mtimeMs)) {
      return new Error(`the lock ${held.path} was taken over by another process`);
    }
    if (held.token && Date.now() - held.token.refreshedAt > this.staleMs) {
      return new Error('Unable to update lock within the stale threshold');
    }
    return undefined;
  }

  private forget(held: Held): void {
    this.held.delete(held);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * While locks are held: every staleMs / 4, the tokens' mtimes are set (so no lock of ours
   * looks stale) and the mkdir fallback's folders are touched; a lock found taken over is
   * marked lost by its next check.
   */
  private startRefreshing(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      for (const token of this.tokens.values()) {
        if (!token) continue;
        try {
          this.refreshToken(token);
        } catch {
          // Token gone (the account's folder was removed): its locks fail their next check.
        }
      }
      for (const held of this.held) {
        if (held.token) continue;
        try {
          if (this.check(held)) continue;
          const now = new Date();
          utimesSync(held.path, now, now);
          held.mtimeMs = lstatSync(held.path).mtimeMs;
        } catch {
          // Checked by assertHeld.
        }
      }
    }, this.staleMs / 4).unref();
  }

  /** On exit: the held lock names and the tokens go (as proper-lockfile removed its locks). */
  cleanUp(): void {
    for (const held of this.held) {
      try {
        if (this.check(held)) continue;
        if (held.token) unlinkSync(held.path);
        else rmdirSync(held.path);
      } catch {
        // Nothing more to do on the way out.
      }
    }
    this.held.clear();
    for (const token of this.tokens.values()) {
      try {
        if (token) unlinkSync(token.path);
      } catch {
        // Already gone.
      }
    }
  }
}

const instances = new Set<{ cleanUp(): void }>();

/**
 * Removes held locks and tokens when the process exits, and — like proper-lockfile's
 * signal-exit — when a signal is about to kill it: only when no one else listens to that
 * signal (a listener that keeps the process alive, like watch's SIGTERM, finishes its work and
 * releases the locks itself).
 */
export function cleanUpOnExit(locks: { cleanUp(): void }): void {
  if (instances.size === 0) {
    const cleanUp = () => {
      for (const l of instances) l.cleanUp();
    };
    process.once('exit', cleanUp);
    const signals: NodeJS.Signals[] =
      process.platform === 'win32' ? ['SIGINT', 'SIGTERM'] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const signal of signals) {
      // Who else listened is counted when the signal comes, by a listener that runs first: by
      // the time onSignal runs, a `process.once` listener (track --watch, ui, sandbox: each
      // stops and exits 0) has already removed itself, and the process would be killed under it.
      let others = 0;
      const count = () => {
        others = process.listenerCount(signal) - 2;
      };
      const onSignal = () => {
        if (others > 0) return;
        cleanUp();
        process.removeListener(signal, count);
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      };
      process.prependListener(signal, count);
      process.on(signal, onSignal);
    }
  }
  instances.add(locks);
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}
