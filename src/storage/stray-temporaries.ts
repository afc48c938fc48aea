import { lstat, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../core/log/logger.js';
import { temporaryName, temporaryOf } from './atomic-write.js';
import { processAlive } from './lease.js';

/**
 * How old a temporary must be to be a dead writer's: no atomic write takes this long (nor a
 * bucket's conditional-write probe, s3-store.ts, removed by the same rule). The name
 * carries no host, so on a folder shared between hosts the hour is what keeps another host's
 * write safe (and a write stuck that long only fails its rename: no file is lost).
 */
export const STRAY_AFTER_MS = 60 * 60_000;

/** Which temporaries of a folder may be removed, besides the rules every one of them passes. */
export interface StrayRule {
  /** Only the temporaries of these names (of the files they would have become); of any name when absent. */
  targets?: ReadonlySet<string>;
  /** Only files owned by this user: a shared folder holds other users' files. Any owner when absent. */
  uid?: number;
  /** Told at debug level what could not be looked at or removed; nothing fails for it. */
  logger?: Pick<Logger, 'debug'>;
}

/**
 * Removes from `dir` (whose entries are `names`) the temporaries of atomic writes cut short (a
 * writer killed before its rename): names of writeFileAtomic's form (atomic-write.ts), regular
 * files (lstat: a link of that name is never followed nor removed), over STRAY_AFTER_MS old by
 * their mtime (the file system's time), of a PID that is neither this process nor alive on this
 * host, and as `rule` narrows. Names are judged before anything is read: a folder without
 * such a name costs nothing more. Returns how many were removed; never throws.
 */
export async function removeStrayTemporaries(
  dir: string,
  names: readonly string[],
  rule: StrayRule = {},
): Promise<number> {
  let removed = 0;
  for (const name of names) {
    const of = temporaryOf(name);
    if (!of || (rule.targets && !rule.targets.has(of.target))) continue;
    if (of.pid === process.pid || processAlive(of.pid)) continue;
    const path = join(dir, name);
    try {
      const info = await lstat(path);
      if (!info.isFile() || (rule.uid !== undefined && info.uid !== rule.uid)) continue;
      if (Date.now() - info.mtimeMs < STRAY_AFTER_MS) continue;
      await rm(path, { force: true });
      removed++;
    } catch (err) {
      // Gone meanwhile (another writer's cleanup, a listing remembered): nothing to say.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      rule.logger?.debug({ file: path, err: (err as Error).message }, 'could not remove a stray temporary file');
    }
  }
  return removed;
}

/**
 * The temporaries' names a folder held when it was last listed, by folder (path, device, inode
 * and birth time: a watcher's folder is a /proc/self/fd path, whose number a later folder may
 * take, as a new folder may take a removed one's inode), for STRAY_AFTER_MS. Nothing removable is missed meanwhile: a temporary made after the listing has
 * its mtime after it, so it is not over STRAY_AFTER_MS old before the listing is forgotten (a
 * file server's clock behind this host's can delay one by at most that). Buys one listing of a
 * folder an hour instead of one per input written into it: a watcher's done/ keeps every input
 * it ever finished (bench/report-strays.mjs; docs/performance.md).
 */
export class TemporaryListings {
  private readonly listed = new Map<string, { at: number; names: string[] }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The names of temporaries in `dir`, as listed at most STRAY_AFTER_MS ago. Throws what stat or readdir throws. */
  async of(dir: string): Promise<string[]> {
    const at = this.now();
    for (const [key, seen] of this.listed) if (at - seen.at >= STRAY_AFTER_MS) this.listed.delete(key);
    const { dev, ino, birthtimeMs } = await stat(dir);
    const key = `${dir}\0${dev}:${ino}:${birthtimeMs}`;
    const seen = this.listed.get(key);
    if (seen) return seen.names;
    const names = (await readdir(dir)).filter((n) => temporaryOf(n) !== undefined);
    this.listed.set(key, { at, names });
    return names;
  }
}

const processListings = new TemporaryListings();

/**
 * Removes the stray temporaries (removeStrayTemporaries) of the files at `paths` only — an
 * input's reports, about to be written — when they are this user's: one listing of each folder
 * an hour (TemporaryListings). Where this process has no user id to compare, nothing is removed.
 */
export async function removeStraysOf(
  paths: readonly string[],
  logger?: Pick<Logger, 'debug'>,
  listings: TemporaryListings = processListings,
): Promise<number> {
  const uid = process.getuid?.();
  if (uid === undefined) return 0;
  const byDir = new Map<string, Set<string>>();
  for (const path of paths) byDir.set(dirname(path), (byDir.get(dirname(path)) ?? new Set()).add(basename(path)));
  let removed = 0;
  for (const [dir, targets] of byDir) {
    const names = await listings.of(dir).catch((err: Error) => {
      logger?.debug({ folder: dir, err: err.message }, 'could not look for stray temporary files');
      return [];
    });
    removed += await removeStrayTemporaries(dir, names, { targets, uid, ...(logger ? { logger } : {}) });
  }
  return removed;
}

/**
 * A temporary name (temporaryName) for a write of each of `paths`, once the stray temporaries
 * of those names are removed (removeStraysOf): files written under them and renamed into place
 * by the caller (a watcher's reports, staged in done/, failed/ or held/).
 */
export async function freshTemporaries<K extends string>(
  paths: Record<K, string>,
  logger?: Pick<Logger, 'debug'>,
): Promise<Record<K, string>> {
  await removeStraysOf(Object.values<string>(paths), logger);
  const named = Object.entries<string>(paths).map(([kind, path]) => [kind, temporaryName(path)]);
  return Object.fromEntries(named) as Record<K, string>;
}
