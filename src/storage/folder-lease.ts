import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanUpOnExit, stopCleaningUp } from '../core/exit-cleanup.js';
import { isExpired, type Lease, type LeaseStore, leaseText, parseLease } from './lease.js';

/**
 * Leases in a folder (lease.ts): the lease `NAME` is a hard link to its holder's token, a file
 * holding the holder's record. `link` fails when the name exists: as atomic as an exclusive
 * create, on local disks and on NFS, where it is the classic lock primitive. One token per store
 * and folder, so no inode is made or freed per lease (creating one is the dearest thing these
 * file systems do); rewriting it in place renews every lease linked to it at once. A lease is
 * ours while its name leads to our token's inode. Where hard links are refused (some SMB shares),
 * a lease is a file of its own, made exclusively and rewritten in place the same way.
 *
 * Older htorder versions share these names: their claim files hold the same record; their ledger
 * locks (empty tokens, proper-lockfile's folders) hold none and are judged by mtime, as they
 * judge ours — a renewal refreshes it. A link planted at a lease's name is never followed.
 */

/** A token's name: hidden, and never a claim's or a lock's (those end in `.claim`, `.lock`). */
const TOKEN_PREFIX = '.htorder-lease.';

/** Whether `name` is a lease token: this version's, or an older version's ledger token (`<host>~<pid>~<id>.token`). */
export function isLeaseToken(name: string): boolean {
  return name.startsWith(TOKEN_PREFIX) || /~\d+~[0-9a-f]+\.token$/.test(name);
}

/** Errors of `link` meaning "no hard link here" (SMB, FAT, another mount, the link limit), not "the name exists". */
const LINKS_REFUSED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV']);

export function linkRefused(err: unknown): boolean {
  return LINKS_REFUSED.has(codeOf(err) ?? '');
}

export type LinkFile = (existing: string, newPath: string) => void;

export interface FolderLeaseOptions {
  /** Written into every lease record (lease.ts newOwnerId). */
  owner: string;
  leaseMs: number;
  /**
   * Where the token of a folder's leases is kept (made with `mode`): a sub folder of the lease's
   * folder, or the folder a function names for it — leases in many folders (a ledger's shards)
   * then share one token, which must be on the same file system; default the lease's folder.
   */
  tokenDir?: string | ((leaseDir: string) => string);
  mode?: number;
  /** fs.linkSync; tests pass one that refuses, as some SMB shares do. */
  link?: LinkFile;
  /** Leases outlive their holder's process until they run out (lease.ts ExpiryRule). */
  survivesHolder?: boolean;
  /** The time (tests pass their own). */
  now?: () => number;
}

/** A file whose record this process rewrites in place: the token of a folder's leases, or a lease made exclusively. */
interface Token {
  path: string;
  /** Undefined once closed: the leases on it are lost. */
  fd: number | undefined;
  dev: number;
  ino: number;
  renewedAt: number;
  length: number;
}

/** O_NOFOLLOW: a link at the name fails with ELOOP; O_NONBLOCK: a FIFO swapped in cannot block the open. */
const OPEN_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CREATE = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * How long a renewal waits for a lease name it finds missing before it counts the lease lost:
 * a contender that judged it expired from a read taken before a renewal moves it aside, sees the
 * renewal, and puts it back (moveAside) within a few file operations.
 */
const PUT_BACK_PAUSE_MS = 10;
const PUT_BACK_TRIES = 20;

export class FolderLeases implements LeaseStore {
  readonly leaseMs: number;
  /** The token of each token folder (tokenDir) leases were taken in. */
  private readonly tokens = new Map<string, Token>();
  /** Folders where hard links are refused: leases there are files of their own. */
  private readonly noLinks = new Set<string>();
  readonly held = new Set<FolderLease>();

  constructor(private readonly options: FolderLeaseOptions) {
    this.leaseMs = options.leaseMs;
  }

  async tryAcquire(name: string): Promise<Lease | undefined> {
    // Ours still, however late its renewal: taking it over would make its holder lose it to us.
    if ([...this.held].some((l) => l.name === name && !l.lost())) return undefined;
    // Two passes at most: the second after moving an expired lease out of the way.
    for (let pass = 0; pass < 2; pass++) {
      const lease = this.create(name);
      if (lease || pass === 1) return lease;
      const seen = inspect(name);
      if (seen === undefined) continue; // released meanwhile: try again at once
      if (!this.expired(seen)) return undefined;
      moveAside(name, seen);
    }
    return undefined;
  }

  /** Makes the name, or undefined when it exists. */
  private create(name: string, retried = false): FolderLease | undefined {
    const dir = dirname(name);
    if (!this.noLinks.has(dir)) {
      const token = this.tokenFor(dir);
      // Fresh enough that a new lease starts with most of a lease.
      this.renewToken(token);
      try {
        (this.options.link ?? linkSync)(token.path, name);
        return this.hold(name, token, false);
      } catch (err) {
        if (codeOf(err) === 'EEXIST') return undefined;
        // The token was swept as dead (this process stalled past its lease) or went with its
        // folder: a new one, whose leases are ours; those of the old one count as lost.
        if (codeOf(err) === 'ENOENT' && !retried) {
          this.tokens.delete(this.tokenDirOf(dir));
          closeToken(token);
          return this.create(name, true);
        }
        if (!linkRefused(err)) throw err;
        this.noLinks.add(dir);
      }
    }
    let own: Token;
    try {
      own = this.openToken(name);
    } catch (err) {
      if (codeOf(err) === 'EEXIST') return undefined;
      throw err;
    }
    return this.hold(name, own, true);
  }

  /** The folder the token of leases in `dir` is kept in. */
  private tokenDirOf(dir: string): string {
    const where = this.options.tokenDir;
    return typeof where === 'function' ? where(dir) : join(dir, where ?? '');
  }

  private tokenFor(dir: string): Token {
    const tokens = this.tokenDirOf(dir);
    const known = this.tokens.get(tokens);
    if (known) return known;
    mkdirSync(tokens, { recursive: true, mode: this.options.mode });
    this.sweep(tokens);
    const token = this.openToken(join(tokens, `${TOKEN_PREFIX}${randomBytes(8).toString('hex')}`));
    this.tokens.set(tokens, token);
    cleanUpOnExit(this);
    return token;
  }

  private openToken(path: string): Token {
    const fd = openSync(path, CREATE);
    const s = fstatSync(fd);
    const token: Token = { path, fd, dev: s.dev, ino: s.ino, renewedAt: 0, length: 0 };
    this.renewToken(token, 0);
    return token;
  }

  /** Rewrites the token's record unless that was done less than `minAgeMs` ago (a sixth of a lease). */
  renewToken(token: Token, minAgeMs = this.leaseMs / 6): void {
    const now = this.now();
    if (token.fd === undefined || now - token.renewedAt < minAgeMs) return;
    token.renewedAt = now;
    const bytes = Buffer.from(leaseText(this.options.owner, this.leaseMs, token.renewedAt));
    // Same length each time (only the time's digits change): written over, never cut short first.
    writeSync(token.fd, bytes, 0, bytes.length, 0);
    if (bytes.length < token.length) ftruncateSync(token.fd, bytes.length);
    token.length = bytes.length;
  }

  private expired(seen: Seen): boolean {
    return isExpired(parseLease(seen.text), this.now(), {
      age: { mtimeMs: seen.mtimeMs, staleMs: this.leaseMs },
      survivesHolder: this.options.survivesHolder === true,
    });
  }

  /**
   * Removes from `dir` the tokens whose holders are gone (killed, or vanished from the host),
   * by the rule a lease is judged by. Only a name goes: a lease still linked to one keeps its
   * inode and is taken over like any expired lease. Read twice alike: a read that met a renewal
   * half-written is not taken for a dead lease.
   */
  sweep(dir: string): void {
    for (const name of readdirSync(dir)) {
      if (!isLeaseToken(name)) continue;
      const path = join(dir, name);
      const seen = inspect(path);
      if (seen && this.expired(seen) && inspect(path)?.text === seen.text) removeName(path);
    }
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private hold(name: string, token: Token, own: boolean): FolderLease {
    const lease = new FolderLease(this, name, token, own);
    this.held.add(lease);
    return lease;
  }

  /** Releases the leases still held and removes the tokens (also when the process exits). */
  cleanUp(): void {
    for (const lease of [...this.held]) lease.releaseNow();
    for (const token of this.tokens.values()) closeToken(token);
    this.tokens.clear();
  }

  close(): void {
    this.cleanUp();
    stopCleaningUp(this);
  }
}

class FolderLease implements Lease {
  private why: Error | undefined;
  private released = false;

  constructor(
    private readonly store: FolderLeases,
    readonly name: string,
    private readonly token: Token,
    /** Made exclusively: a file of its own, closed and removed with the lease. */
    private readonly own: boolean,
  ) {}

  lost(): Error | undefined {
    if (this.why || this.released) return this.why;
    const now = this.token.fd === undefined ? undefined : lstatSync(this.name, { throwIfNoEntry: false });
    if (this.token.fd === undefined) this.why = new Error(`the lease ${this.name} ran out: its token is gone`);
    else if (!now) this.why = new Error(`the lease ${this.name} was removed`);
    else if (now.ino !== this.token.ino || now.dev !== this.token.dev)
      this.why = new Error(`the lease ${this.name} was taken over by another process`);
    if (this.why) this.store.held.delete(this);
    return this.why;
  }

  async renew(): Promise<boolean> {
    await this.awaitPutBack();
    if (this.lost() || this.released) return false;
    this.store.renewToken(this.token);
    return true;
  }

  /** Gives a contender's moveAside the time to put a live lease back before lost() judges it removed for good. */
  private async awaitPutBack(): Promise<void> {
    for (let i = 0; i < PUT_BACK_TRIES && !this.why && !this.released && this.token.fd !== undefined; i++) {
      if (lstatSync(this.name, { throwIfNoEntry: false })) return;
      await sleep(PUT_BACK_PAUSE_MS);
    }
  }

  async release(): Promise<void> {
    this.releaseNow();
  }

  releaseNow(): void {
    if (this.released || this.lost()) return;
    this.released = true;
    this.store.held.delete(this);
    if (this.own) closeToken(this.token);
    else unlinkQuietly(this.name);
  }
}

function closeToken(token: Token): void {
  if (token.fd === undefined) return;
  closeSync(token.fd);
  token.fd = undefined;
  removeName(token.path);
}

/** What a name is now: its inode, mtime, and the text of a small regular file ('' for anything else). */
interface Seen {
  ino: number;
  mtimeMs: number;
  dir: boolean;
  text: string;
}

/** Never follows a link, never blocks on a FIFO, never reads more than 4 KiB; undefined when the name is gone. */
function inspect(path: string): Seen | undefined {
  let fd: number;
  try {
    fd = openSync(path, OPEN_READ);
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return undefined;
    // A link (ELOOP) or anything else that cannot be opened: judged by its own lstat.
    const s = lstatSync(path, { throwIfNoEntry: false });
    return s && { ino: s.ino, mtimeMs: s.mtimeMs, dir: s.isDirectory(), text: '' };
  }
  try {
    const s = fstatSync(fd);
    let text = '';
    if (s.isFile()) {
      const buf = Buffer.allocUnsafe(4096);
      const n = readSync(fd, buf, 0, buf.length, 0);
      // One read: a short read of a regular file is its end; a full one is no lease record.
      if (n < buf.length) text = buf.toString('utf8', 0, n);
    }
    return { ino: s.ino, mtimeMs: s.mtimeMs, dir: s.isDirectory(), text };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes an expired lease without removing a live one that replaced it meanwhile: the name is
 * moved aside first (atomic: one contender gets it), and put back when what was moved is not
 * what was judged expired (renewed or retaken in between).
 */
function moveAside(name: string, seen: Seen): void {
  // Short: the name of a claim moved aside stays within the limit on a name's length.
  const aside = `${name}.${randomBytes(4).toString('hex')}.stale`;
  try {
    renameSync(name, aside);
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return;
    throw err;
  }
  const moved = inspect(aside);
  if (moved && (moved.ino !== seen.ino || moved.mtimeMs !== seen.mtimeMs || moved.text !== seen.text)) {
    try {
      if (moved.dir) renameSync(aside, name);
      else linkSync(aside, name);
    } catch {
      // The name was taken again meanwhile: the holder of what was moved finds its lease lost.
    }
  }
  removeName(aside);
}

function removeName(path: string): void {
  try {
    if (lstatSync(path).isDirectory()) rmdirSync(path);
    else unlinkSync(path);
  } catch {
    // Gone already, or (a folder that is not empty) not a lease of ours to remove.
  }
}

/**
 * Removes a name lost() has just found linked to this process's token, a file: no second look at
 * what it is, as removeName takes for a name of unknown kind.
 */
function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already: taken over and removed in the moment since.
  }
}

function codeOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}
