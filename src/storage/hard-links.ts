/**
 * Errors of `link` that mean "this file system will not make a hard link here" (some SMB
 * shares, FAT, a name on another mount, an inode at its link limit), not "the name exists":
 * callers that claim or lock by linking fall back to an exclusive create on these.
 */
const LINKS_REFUSED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV']);

export function linkRefused(err: unknown): boolean {
  return LINKS_REFUSED.has((err as NodeJS.ErrnoException).code ?? '');
}
