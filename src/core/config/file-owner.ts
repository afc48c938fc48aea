import type { Stats } from 'node:fs';

/**
 * Why a file that decides what htorder does (a config file, a saved plan) cannot be trusted, or
 * undefined when it can: as ssh and git do, it must be the user's own — and so must the symbolic
 * link that names it, if any — and neither group nor others may write it. `target` is the file's
 * own stat (of the descriptor read, where the caller holds one), `link` the name's lstat.
 */
export function ownershipProblem(target: Stats, link: Stats, uid = process.getuid?.()): string | undefined {
  if (uid !== undefined) {
    if (target.uid !== uid) return `it belongs to uid ${target.uid}, not to you (uid ${uid})`;
    if (link.isSymbolicLink() && link.uid !== uid) return `it is a symbolic link made by uid ${link.uid}`;
  }
  if ((target.mode & 0o022) !== 0) return 'group or others may write it';
  return undefined;
}
