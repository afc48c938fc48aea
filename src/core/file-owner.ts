/**
 * Why a file another user may have planted or changed is not to be trusted by this process's
 * user, as ssh and git judge their files: it belongs to another user, or group or others may
 * write it. Undefined when it is the user's own and only theirs to write. Where the platform
 * has no user ids (Windows), only the mode is judged.
 */
export function untrustedFile(info: { uid: number; mode: number }, uid = process.getuid?.()): string | undefined {
  if (uid !== undefined && info.uid !== uid) return `it belongs to uid ${info.uid}, not to you (uid ${uid})`;
  if ((info.mode & 0o022) !== 0) return `group or others may write it (mode ${modeText(info.mode)})`;
  return undefined;
}

/**
 * Why a file or folder the user named is not to be trusted: any user of the machine may write
 * it. Its owner and group are the user's choice when they name it (a system config of root's, a
 * team's folder, a container's mounted file); a mode that lets everyone write is nobody's choice.
 */
export function writableByOthers(mode: number): string | undefined {
  return (mode & 0o002) === 0 ? undefined : `other users may write it (mode ${modeText(mode)})`;
}

/**
 * Why a name the user gave may have been put there by another user: its folder lets every user
 * make names in it (/tmp, a shared drop) and the name (the file, or the link naming it) is
 * neither the user's nor root's. Elsewhere the folder's owner decides what its names are.
 */
export function plantedName(
  name: { uid: number },
  folder: { mode: number },
  uid = process.getuid?.(),
): string | undefined {
  if (uid === undefined || writableByOthers(folder.mode) === undefined || name.uid === uid || name.uid === 0)
    return undefined;
  return `it belongs to uid ${name.uid}, in a folder every user may write`;
}

/** A file's permission bits as chmod writes them: 0644. */
export function modeText(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}
