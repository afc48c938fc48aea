/**
 * Why a file another user may have planted or changed is not to be trusted by this process's
 * user, as ssh and git judge their files: it belongs to another user, or group or others may
 * write it. Undefined when it is the user's own and only theirs to write. Where the platform
 * has no user ids (Windows), only the mode is judged.
 */
export function untrustedFile(info: { uid: number; mode: number }, uid = process.getuid?.()): string | undefined {
  if (uid !== undefined && info.uid !== uid) return `it belongs to uid ${info.uid}, not to you (uid ${uid})`;
  if ((info.mode & 0o022) !== 0)
    return `group or others may write it (mode ${(info.mode & 0o7777).toString(8).padStart(4, '0')})`;
  return undefined;
}
