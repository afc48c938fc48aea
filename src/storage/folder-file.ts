import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** O_NOFOLLOW: a link at the name is refused (ELOOP); O_NONBLOCK: a FIFO put there cannot block the open. */
const OPEN_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** A folder, opened to be judged by its descriptor. */
const OPEN_FOLDER = constants.O_RDONLY | constants.O_DIRECTORY;

/** A lookup table or a mapping this large is a mistake or an attack, not a table of SKUs. */
export const MAX_MAPPING_FILE_BYTES = 16 * 1024 * 1024;

/** Why a file a mapping names cannot be read; the message names the file, never its content. */
export class FolderFileError extends Error {
  override name = 'FolderFileError';
}

/**
 * A folder known by its identity, not its name: where a manifest was read (pinManifestFolder)
 * or the folder a watcher watches. Files are read from it only while its real path still
 * leads to that very folder.
 */
export interface FolderPin {
  /** The folder's real path (no link in it). */
  path: string;
  dev: number;
  ino: number;
  /**
   * The owner of the manifest that names files in it. Unless that is the runner itself, a file
   * is read only when that user could read it: theirs, or readable by everyone.
   */
  readerUid?: number;
}

/** Whether `path` is `folder` itself or below it (both resolved, no `..` left). */
function isInside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Where an open descriptor really is: the kernel's own path of the open file (Linux
 * /proc/self/fd/N), whatever the names that led to it lead to now; undefined without /proc.
 */
function realPathOf(fd: number): string | undefined {
  try {
    const path = readlinkSync(`/proc/self/fd/${fd}`);
    return path.startsWith('/') ? path : undefined;
  } catch {
    return undefined;
  }
}

/** The kernel refuses hard links to files one may not read and write (fs.protected_hardlinks=1). */
let protectedHardLinks: boolean | undefined;
function hardLinksProtected(): boolean {
  if (protectedHardLinks === undefined) {
    try {
      protectedHardLinks = readFileSync('/proc/sys/fs/protected_hardlinks', 'utf8').trim() === '1';
    } catch {
      protectedHardLinks = false;
    }
  }
  return protectedHardLinks;
}

/**
 * Why a file with more than one hard link is not read, or undefined when it may be. A hard
 * link puts any file of the disk under a name in the folder (a runner's secret config
 * included); where the kernel protects hard links, only the file's owner, or one who may read
 * and write it, can make one. So a hard-linked file is read only when it is the runner's own,
 * not writable by group or others, and the kernel protects hard links.
 */
export function hardLinkRefusal(
  st: Pick<Stats, 'nlink' | 'uid' | 'mode'>,
  protectedLinks = hardLinksProtected(),
  runner = process.getuid?.(),
): string | undefined {
  if (st.nlink <= 1) return undefined;
  const why =
    st.uid !== runner
      ? `belongs to another user (uid ${st.uid})`
      : (st.mode & 0o022) !== 0
        ? 'may be written by group or others'
        : !protectedLinks
          ? 'this system does not protect hard links (fs.protected_hardlinks is not 1)'
          : undefined;
  if (why === undefined) return undefined;
  return (
    `has ${st.nlink} hard links and ${why}: a hard-linked file is read only when it is the runner's own, ` +
    'not writable by group or others, on a system that protects hard links (copy the file in instead of linking it)'
  );
}

/** A regular file opened inside its folder: the open descriptor, its size and identity. The caller closes `fd`. */
export interface FolderFile {
  fd: number;
  size: number;
  stats: Stats;
}

/**
 * Opens `name`, a file an input names (a mapping's lookup table or the mapping it extends, a
 * manifest's artwork), only when it is a regular file inside `folder`, and judges what was
 * opened, never the name: the folder is opened first (and must be the pinned folder, when
 * `folder` is a FolderPin), the file is opened from that open folder without following a link
 * at its name (/proc/self/fd/DIR/NAME: Node has no openat), and the open file's own real path
 * (/proc/self/fd/N) must lie inside the folder's, its name still leading to it (device and
 * inode). A folder on the way swapped for a link at any moment is caught, since what is judged
 * is where the descriptor is. Without /proc, the real path of the name and the device and
 * inode after the open are what is left. A file with several hard links is refused unless
 * hardLinkRefusal allows it. `place` names the folder in messages ("the mapping's folder").
 */
export function openFileInFolder(
  folder: string | FolderPin,
  name: string,
  maxBytes: number,
  place: string,
): FolderFile {
  const base = typeof folder === 'string' ? resolve(folder) : folder.path;
  if (isAbsolute(name) || !isInside(base, resolve(base, name))) throw new FolderFileError(`is outside ${place}`);
  const dir = openFolder(base, folder, place);
  try {
    const dirReal = realPathOf(dir.fd);
    const at = dirReal === undefined ? resolve(base, name) : join(`/proc/self/fd/${dir.fd}`, name);
    const fd = openNoFollow(at, place);
    try {
      const stats = judgeOpened(fd, dirReal ?? realpathSync(base), at, place);
      const refused = hardLinkRefusal(stats) ?? unreadableBy(stats, typeof folder === 'string' ? undefined : folder);
      if (refused) throw new FolderFileError(refused);
      if (stats.size > maxBytes) throw new FolderFileError(`is larger than ${maxBytes} bytes`);
      return { fd, size: stats.size, stats };
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  } finally {
    closeSync(dir.fd);
  }
}

/** Opens the folder (the pinned one, or refuses). */
function openFolder(base: string, folder: string | FolderPin, place: string): { fd: number } {
  let fd: number;
  try {
    fd = openSync(base, OPEN_FOLDER | (typeof folder === 'string' ? 0 : constants.O_NOFOLLOW));
  } catch (err) {
    throw new FolderFileError(`cannot be read: ${place} cannot be opened (${(err as NodeJS.ErrnoException).code})`);
  }
  if (typeof folder !== 'string') {
    const st = fstatSync(fd);
    if (st.dev !== folder.dev || st.ino !== folder.ino) {
      closeSync(fd);
      throw new FolderFileError(`cannot be read: ${place} was replaced (renamed, or swapped with a link)`);
    }
  }
  return { fd };
}

function openNoFollow(path: string, place: string): number {
  try {
    return openSync(path, OPEN_NO_FOLLOW);
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
}

/** The open file's stats, once it is known to be a regular file inside `folderReal`. */
function judgeOpened(fd: number, folderReal: string, at: string, place: string): Stats {
  const st = fstatSync(fd);
  if (!st.isFile()) throw new FolderFileError('is not a regular file');
  let real: string | undefined = realPathOf(fd);
  if (real === undefined) {
    try {
      real = realpathSync(at);
    } catch {
      throw new FolderFileError('was moved while it was read');
    }
  }
  if (!isInside(folderReal, real)) throw new FolderFileError(`is outside ${place} (through a symbolic link)`);
  // The real path must still lead to the very file opened (lstat: nothing followed at its end).
  const now = lstatSync(real, { throwIfNoEntry: false });
  if (now?.dev !== st.dev || now.ino !== st.ino) throw new FolderFileError('was moved while it was read');
  return st;
}

/** A file the manifest's owner could not read themselves is not read for them (FolderPin.readerUid). */
function unreadableBy(st: Stats, pin: FolderPin | undefined): string | undefined {
  const reader = pin?.readerUid;
  if (reader === undefined || reader === process.getuid?.() || st.uid === reader || (st.mode & 0o004) !== 0)
    return undefined;
  return `belongs to another user (uid ${st.uid}) and is not readable by everyone: only files the manifest's owner may read are read for it`;
}

/**
 * The folder `file` (an input, read and hashed to `sha256`) lies in, pinned: opened, and
 * holding under the file's name a file with exactly those bytes now. So a folder swapped for a
 * link to another after the manifest was read is not taken for the manifest's: files are then
 * read only from the folder the manifest really is in, whatever its name leads to later.
 */
export async function pinManifestFolder(file: string, sha256: string): Promise<FolderPin> {
  const path = resolve(file);
  let dir: number;
  try {
    dir = openSync(dirname(path), OPEN_FOLDER);
  } catch (err) {
    throw new FolderFileError(
      `cannot be read: the manifest's folder cannot be opened (${(err as NodeJS.ErrnoException).code})`,
    );
  }
  try {
    const dirReal = realPathOf(dir);
    const at = dirReal === undefined ? path : join(`/proc/self/fd/${dir}`, basename(path));
    const manifest = await manifestOwner(at, sha256);
    const st = fstatSync(dir);
    return { path: dirReal ?? realpathSync(dirname(path)), dev: st.dev, ino: st.ino, readerUid: manifest.uid };
  } finally {
    closeSync(dir);
  }
}

/** The manifest at `at`, hashed again: its stats when it still holds the bytes read, else a refusal. */
async function manifestOwner(at: string, sha256: string): Promise<Stats> {
  const changed = new FolderFileError(
    'cannot be read: the manifest changed or moved since it was read, so its folder is not known',
  );
  const handle = await open(at, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => {
    throw changed;
  });
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw changed;
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false, start: 0 })) hash.update(chunk);
    if (hash.digest('hex') !== sha256) throw changed;
    return st;
  } finally {
    await handle.close();
  }
}

/** The folder at `path` pinned as it is now (its owner's files and everyone's readable, `readerUid` aside). */
export function pinFolder(path: string): FolderPin {
  const fd = openSync(path, OPEN_FOLDER);
  try {
    const st = fstatSync(fd);
    return { path: realPathOf(fd) ?? realpathSync(path), dev: st.dev, ino: st.ino };
  } finally {
    closeSync(fd);
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
