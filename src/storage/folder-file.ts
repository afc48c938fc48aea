import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

/** O_NOFOLLOW: a link at the name is refused (ELOOP); O_NONBLOCK: a FIFO put there cannot block the open. */
const OPEN_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A lookup table or a mapping this large is a mistake or an attack, not a table of SKUs. */
export const MAX_MAPPING_FILE_BYTES = 16 * 1024 * 1024;

/** Why a file a mapping names cannot be read; the message names the file, never its content. */
export class FolderFileError extends Error {
  override name = 'FolderFileError';
}

/** Whether `path` is `folder` itself or below it (both resolved, no `..` left). */
function isInside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** A regular file opened inside its folder: the open descriptor and its size. The caller closes `fd`. */
export interface FolderFile {
  fd: number;
  size: number;
}

/**
 * Opens `name`, a file an input names (a mapping's lookup table or the mapping it extends, a
 * manifest's artwork), only when it is a regular file inside `folder`: never through a link,
 * neither at its name (O_NOFOLLOW) nor in a folder on the way (the file's real path must lie in
 * the folder's real path, and be the very file that was opened: same device and inode, so a
 * folder swapped for a link between the open and the check is caught). An input may sit in a
 * folder others can write; a link there must not lead htorder to read, echo or upload a secret
 * file. `place` names the folder in messages ("the mapping's folder").
 */
export function openFileInFolder(folder: string, name: string, maxBytes: number, place: string): FolderFile {
  const path = resolve(folder, name);
  if (isAbsolute(name) || !isInside(resolve(folder), path)) throw new FolderFileError(`is outside ${place}`);
  let fd: number;
  try {
    fd = openSync(path, OPEN_NO_FOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new FolderFileError(
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'ELOOP'
          ? `is a symbolic link (read only as a file of ${place})`
          : `cannot be read (${code})`,
    );
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new FolderFileError('is not a regular file');
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      throw new FolderFileError('was moved while it was read');
    }
    const now = statSync(real, { throwIfNoEntry: false });
    if (!isInside(realpathSync(folder), real) || now?.dev !== st.dev || now.ino !== st.ino)
      throw new FolderFileError(`is outside ${place} (through a symbolic link)`);
    if (st.size > maxBytes) throw new FolderFileError(`is larger than ${maxBytes} bytes`);
    return { fd, size: st.size };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** The text of a file a mapping names, read as openFileInFolder allows. */
export function readFileInFolder(folder: string, name: string, maxBytes = MAX_MAPPING_FILE_BYTES): string {
  const { fd, size } = openFileInFolder(folder, name, maxBytes, "the mapping's folder");
  try {
    const bytes = Buffer.alloc(size);
    let at = 0;
    while (at < bytes.length) {
      const n = readSync(fd, bytes, at, bytes.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return bytes.subarray(0, at).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
