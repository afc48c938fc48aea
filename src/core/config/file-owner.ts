import type { Stats } from 'node:fs';
import { untrustedFile } from '../file-owner.js';

/** The superuser, whose files (a system config: /etc/htorder/config.yaml, root:htorder 0640) are trusted as the user's own, as ssh does: root may change any file anyway. */
const ROOT_UID = 0;

/**
 * Why a file that decides what htorder does (a config file, named or found; a saved plan)
 * cannot be trusted, or undefined when it can: as ssh does, it must be the user's own or
 * root's — and so must the symbolic link that names it, if any — and neither group nor others
 * may write it (untrustedFile). `target` is the file's own stat (of the descriptor read, where
 * the caller holds one), `link` the name's lstat.
 */
export function ownershipProblem(target: Stats, link: Stats, uid = process.getuid?.()): string | undefined {
  const why = untrustedFile(target, target.uid === ROOT_UID ? undefined : uid);
  if (why !== undefined) return why;
  if (uid !== undefined && link.isSymbolicLink() && link.uid !== uid && link.uid !== ROOT_UID)
    return `it is a symbolic link made by uid ${link.uid}`;
  return undefined;
}
