import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { linkRefused } from '../../storage/hard-links.js';
import { isExpired, leaseRecord, parseLease } from '../../storage/lease.js';
import { removeFile } from '../../storage/remove-file.js';

/** Hidden (never an input, drop-names.ts), and no claim's name: `.NAME.claim` always ends in `.claim`. */
const TOKEN_PREFIX = '.htorder-lease.';

/** The inode a claim made by linking leads to: a claim name is ours while it leads there. */
export interface LinkedClaim {
  dev: number;
  ino: number;
}

/** How a claim name was made: a link to this instance's token, or `exclusive` (no hard links here). */
export type ClaimMade = LinkedClaim | 'exclusive';

export type LinkFile = (existing: string, newPath: string) => Promise<void>;

/**
 * One instance's lease token in a drop folder's processing/: `.htorder-lease.<tag>`, holding
 * the same lease record an exclusively created claim holds (owner, host, pid, until). Each
 * claim of the instance is a hard link to it, `processing/.NAME.claim`: `link` fails with
 * EEXIST exactly as an exclusive create does (also on NFS, where it is the classic lock
 * primitive), and a reader of the claim — also an htorder that only knows exclusive claims —
 * reads the same record and judges it by the same rule (lease.ts isExpired).
 *
 * Why: on the disks measured, creating an inode costs ~1 ms of kernel CPU and every inode
 * freed makes later creates slower for minutes; a link costs ~20 µs and dropping one name of
 * an inode that keeps another frees nothing. Renewing rewrites the token in place (same length,
 * never truncated: a reader never sees it empty), which renews every claim of the instance at
 * once instead of a temporary file and a rename per claim. A claim name that no longer leads to
 * the token's inode was taken over (another instance moved it aside and made its own).
 */
export class ClaimToken {
  readonly path: string;
  private handle: FileHandle | undefined;
  private current: LinkedClaim | undefined;
  private renewedAt = 0;
  private length = 0;
  private making: Promise<LinkedClaim> | undefined;
  /** Set when the file system refused a link: claims are then created exclusively. */
  private refused = false;

  constructor(
    folder: string,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly linkFile: LinkFile = link,
  ) {
    this.path = join(folder, `${TOKEN_PREFIX}${createHash('sha256').update(owner).digest('hex').slice(0, 16)}`);
  }

  /** The lease record as claim files hold it (one line of JSON), valid for a lease from now. */
  record(): string {
    return `${JSON.stringify(leaseRecord(this.owner, this.leaseMs))}\n`;
  }

  /**
   * Links `claim` to the token: the claim made, or undefined when the name exists (held, or
   * stale and to be taken over by the caller), or `exclusive` after making it as a file of its
   * own where hard links are refused.
   */
  async claim(claim: string): Promise<ClaimMade | undefined> {
    if (!this.refused) {
      for (let attempt = 0; ; attempt++) {
        const token = await this.fresh();
        try {
          await this.linkFile(this.path, claim);
          return token;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'EEXIST') return undefined;
          // Our token was swept as dead (we stalled past the lease): a new one, whose claims
          // are ours; the claims of the old one are no longer renewed and count as lost.
          if (code === 'ENOENT' && attempt === 0) {
            await this.forget();
            continue;
          }
          if (!linkRefused(err)) throw err;
          this.refused = true;
          break;
        }
      }
    }
    try {
      const handle = await open(claim, 'wx');
      try {
        await handle.writeFile(this.record());
      } finally {
        await handle.close();
      }
      return 'exclusive';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw err;
    }
  }

  /** Whether the linked claim at `claim` is still ours: it leads to the token, which is still this instance's. */
  async holds(claim: string, made: LinkedClaim): Promise<boolean> {
    if (this.current?.ino !== made.ino || this.current.dev !== made.dev) return false;
    const now = await lstat(claim).catch(() => undefined);
    return now?.ino === made.ino && now.dev === made.dev;
  }

  /** Renews the lease of every linked claim, unless that was done a sixth of a lease ago. */
  async renew(): Promise<void> {
    if (this.handle && Date.now() - this.renewedAt < this.leaseMs / 6) return;
    await this.write();
  }

  /** The token, made or renewed as needed so that a new claim starts with most of a lease. */
  private async fresh(): Promise<LinkedClaim> {
    if (this.handle && this.current) {
      await this.renew();
      return this.current;
    }
    // Claims made at once wait for the one making of the token.
    this.making ??= this.make().finally(() => {
      this.making = undefined;
    });
    return this.making;
  }

  /** Made once per instance, and left open to be rewritten in place. */
  private async make(): Promise<LinkedClaim> {
    const handle = await open(this.path, 'wx');
    const s = await handle.stat();
    this.handle = handle;
    this.length = 0;
    this.current = { dev: s.dev, ino: s.ino };
    await this.write();
    return this.current;
  }

  private async write(): Promise<void> {
    if (!this.handle) return;
    const bytes = Buffer.from(this.record());
    this.renewedAt = Date.now();
    // Same length each time (only the time's digits change): written over, never cut short.
    await this.handle.write(bytes, 0, bytes.length, 0);
    if (bytes.length < this.length) await this.handle.truncate(bytes.length);
    this.length = bytes.length;
  }

  private async forget(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    this.current = undefined;
    await handle?.close().catch(() => undefined);
  }

  /** Drops the token (its claims were finished or released; any left keep the inode and expire). */
  async close(): Promise<void> {
    if (!this.handle) return;
    await this.forget();
    await removeFile(this.path);
  }
}

/** Whether `name` in processing/ is a lease token (never an input, a claim or a temporary file). */
export function isClaimToken(name: string): boolean {
  return name.startsWith(TOKEN_PREFIX);
}

/**
 * Removes the tokens of dead instances from `folder` (killed, or gone from the host): by the
 * lease they hold, the rule a claim is judged by. Only a name goes: a claim still linked to
 * one keeps its inode, and is taken over as stale like any other.
 */
export async function sweepDeadTokens(folder: string): Promise<void> {
  for (const name of await readdir(folder)) {
    if (!isClaimToken(name)) continue;
    const path = join(folder, name);
    const text = await readLease(path);
    // Read twice alike: a read that met a renewal half-written is not taken for a dead lease.
    if (text !== undefined && isExpired(parseLease(text)) && (await readLease(path)) === text) await removeFile(path);
  }
}

/** O_NOFOLLOW: a link at the name fails with ELOOP; O_NONBLOCK: a FIFO swapped in cannot block the open. */
const OPEN_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The text of a claim or token (one line of JSON), '' when it cannot be read as a small file
 * (a FIFO or folder read fails), or undefined when it cannot be opened (gone). Never follows a
 * link, never reads more than 4 KiB: one read, as a short read of a regular file is its end.
 */
export async function readLease(path: string): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_NO_FOLLOW);
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.allocUnsafe(4096);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return bytesRead < buf.length ? buf.toString('utf8', 0, bytesRead) : '';
  } catch {
    return '';
  } finally {
    await handle.close();
  }
}
