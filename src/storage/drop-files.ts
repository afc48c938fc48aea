import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { type FileHandle, link, lstat, open, readdir, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { modeText } from '../core/file-owner.js';
import { type NewFileOptions, temporaryName, writeFileAtomic } from './atomic-write.js';
import { linkRefused } from './folder-lease.js';
import { type Identity, sameIdentity } from './held-folder.js';

/**
 * The files of a drop folder as its store (src/watch/sources/folder-source.ts) reads them: never through a link, never blocked by a
 * FIFO, a regular file with one link or nothing (docs/security.md#drop-folders-links-swaps-and-odd-names).
 */

/** O_NOFOLLOW: a link at the name fails with ELOOP; O_NONBLOCK: a FIFO swapped in cannot block the open. */
const OPEN_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** How a file differs from what was copied (`what`), and what becomes of it (`next`), for people. */
export interface FileChange {
  what: string;
  next: string;
}

/** Where a copy is written: a file opened for writing, then named once complete (a watcher's work slot). */
export interface CopyTarget {
  open(): Promise<FileHandle>;
  place(name: string): Promise<unknown>;
}

/** What was copied of a claimed file, to tell later whether it changed, and what its reports take after. */
export interface Verified {
  mode: number;
  gid: number;
  uid: number;
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

/**
 * Opens `path` with O_NOFOLLOW and copies at most `max` bytes through that one handle into the
 * slot's kept file, named `name` once complete. Anything but a regular file with one link is
 * refused unread: a link (ELOOP), a FIFO or device, a hard link to someone else's file; so is
 * a file over the cap, which then cannot pin the watcher.
 */
export async function copyVerified(
  path: string,
  slot: CopyTarget,
  name: string,
  max: number,
): Promise<Verified | string> {
  const unread = (why: string): string => `set aside unread: ${why}`;
  const handle = await openNoFollow(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ELOOP' || err.code === 'EMLINK')
      return unread('it is a symbolic link; links are not followed (copy the file in instead)');
    if (err.code === 'ENXIO' || err.code === 'EISDIR') return unread('it is not a regular file');
    throw err;
  });
  if (typeof handle === 'string') return handle;
  try {
    const before = await handle.stat();
    if (!before.isFile()) return unread('it is not a regular file');
    if (before.nlink !== 1)
      return unread(
        `it has ${before.nlink} hard links; only a file with one link is taken (copy the file in instead of linking it)`,
      );
    if (before.size > max)
      return unread(
        `it is ${before.size} bytes, over the ${max}-byte limit for a dropped file (setting watchMaxInputBytes)`,
      );
    // Hashed as it is copied: what was read is what later checks compare with (changeOf).
    const out = await slot.open();
    let sha256: string;
    try {
      ({ sha256 } = await hashOf(handle, before.size, (chunk) => out.write(chunk)));
    } finally {
      await out.close();
    }
    await slot.place(name);
    // The size and mtime from before the copy: a file that changed while it was read (still
    // being written) differs at the first check, and is given back before anything is sent.
    const { mode, gid, uid, size, mtimeMs, ino } = before;
    return { mode, gid, uid, size, mtimeMs, ino, sha256 };
  } finally {
    await handle.close();
  }
}

/**
 * How the file at `path` (in processing/) differs from what was copied at claim, or undefined.
 * Opened like the claim; size, mtime and inode first, then the sha256 of its bytes, which
 * catches a rewrite that kept both (a coarse mtime on a share). One more byte than was copied
 * is read, so growth shows too.
 */
export async function changeOf(path: string, copied: Verified): Promise<FileChange | undefined> {
  const next = 'will be processed again once stable';
  let handle: FileHandle;
  try {
    handle = await openNoFollow(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { what: 'it is gone from processing/', next: 'nothing is left to process' };
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR')
      return { what: 'it was replaced by something that is not a regular file', next };
    throw err;
  }
  try {
    const now = await handle.stat();
    if (!now.isFile() || now.ino !== copied.ino) return { what: 'it was replaced by another file', next };
    if (now.size !== copied.size) return { what: `its size changed from ${copied.size} to ${now.size} bytes`, next };
    if (now.mtimeMs !== copied.mtimeMs) return { what: 'its modification time changed', next };
    const read = await hashOf(handle, copied.size + 1);
    if (read.bytes !== copied.size || read.sha256 !== copied.sha256)
      return { what: 'its content changed (same size and modification time)', next };
    return undefined;
  } finally {
    await handle.close();
  }
}

/** sha256 of held file `path` when it is a regular file with one link of at most `max` bytes; else undefined. */
export async function hashHeld(
  path: string,
  max: number,
  stillHeld: () => Promise<boolean>,
): Promise<string | undefined> {
  const handle = await openNoFollow(path).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.nlink !== 1 || info.size > max) return undefined;
    const { sha256 } = await hashOf(handle, info.size);
    return (await stillHeld()) ? sha256 : undefined;
  } finally {
    await handle.close();
  }
}

function openNoFollow(path: string): Promise<FileHandle> {
  return open(path, OPEN_NO_FOLLOW);
}

/**
 * Reads at most `limit` bytes from the start of `handle`, hashing them and handing each chunk
 * to `sink`. A short read of a regular file is its end: a small file takes one read, not two.
 */
async function hashOf(
  handle: FileHandle,
  limit: number,
  sink?: (chunk: Buffer) => Promise<unknown>,
): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, Math.max(1, limit)));
  let bytes = 0;
  while (bytes < limit) {
    const want = Math.min(buf.length, limit - bytes);
    const { bytesRead } = await handle.read(buf, 0, want, bytes);
    hash.update(buf.subarray(0, bytesRead));
    await sink?.(buf.subarray(0, bytesRead));
    bytes += bytesRead;
    if (bytesRead < want) break;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Our effective group, a new file's group outside a setgid folder (looked up once). */
let egid: number | undefined;

/** The set-group-ID bit of a folder's mode: new files in it get the folder's group. */
const S_ISGID = 0o2000;

/**
 * Mode and group of an input's reports: the input's group where the owner may set it, never
 * more readable than the input (owner read-write, group and others read only where the input
 * allowed it, nobody else writes). An input refused unread (not checked) gets 0600. The group
 * is left out when a new file in `folder` gets it anyway (the folder's own when it is setgid,
 * else ours): no chown to set what is already so.
 */
export function reportFileOptions(input: Verified | undefined, folder: Stats | undefined): NewFileOptions {
  const mode = 0o600 | ((input?.mode ?? 0) & 0o044);
  if (!input) return { mode };
  egid ??= process.getegid?.() ?? -1;
  const inherited = folder && folder.mode & S_ISGID ? folder.gid : egid;
  return input.gid === inherited ? { mode } : { mode, gid: input.gid };
}

/** The sticky bit of a folder's mode: only an entry's owner (or the folder's) may rename or remove it. */
const S_ISVTX = 0o1000;

/**
 * Why a drop folder that group or others may write is refused, or undefined: without the sticky
 * bit, anyone who may drop a file may also rename the watcher's processing/, done/ and failed/,
 * or swap them with links, and have the watcher's files moved wherever they point (docs/security.md).
 */
export function missingSticky(location: string, info: Stats): string | undefined {
  if ((info.mode & 0o022) === 0 || (info.mode & S_ISVTX) !== 0) return undefined;
  return (
    `the drop folder ${location} (mode ${modeText(info.mode)}) may be written by group or others but has no sticky bit, ` +
    'so a dropper could rename or swap its processing/, done/ and failed/ folders; make it sticky: ' +
    `chmod +t ${location}`
  );
}

/** Whether the entry at `to` is the file `expected` (device and inode), never through a link. */
export async function sameFileAt(to: string, expected: Identity): Promise<boolean> {
  const now = await lstat(to).catch(() => undefined);
  return now !== undefined && sameIdentity(now, expected);
}

/** Removes `file`'s marker (`file` + `suffix`) unless `file` is there: a crash left it; a new file brings its own. */
export async function removeStaleMarker(file: string, suffix: string): Promise<void> {
  if (!(await occupied(file))) await removeFile(`${file}${suffix}`);
}

/** Whether anything is at `path`: a file, a folder or a link, dangling or not (lstat follows none). */
export function occupied(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** Removes a file we placed; one already gone is fine. */
export function unlinkQuiet(path: string): Promise<void> {
  return rm(path, { force: true });
}

/** A small file's text, read through no link and from no FIFO: undefined when absent, '' when not a regular file of at most `max` bytes. */
export async function readSmallFile(path: string, max: number): Promise<string | undefined> {
  const handle = await openNoFollow(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    if (err.code === 'ELOOP' || err.code === 'ENXIO' || err.code === 'EISDIR') return null;
    throw err;
  });
  if (handle === null) return '';
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    return info.isFile() && info.size <= max ? await handle.readFile('utf8') : '';
  } finally {
    await handle.close();
  }
}

/**
 * Writes `text` at `path` whole (a reader never sees it half-written): over what is there when
 * `replace`, else only where nothing is (moveNoClobber). False when something was there.
 */
export async function writeFileExclusive(path: string, text: string, replace: boolean): Promise<boolean> {
  if (replace) {
    await writeFileAtomic(path, text, { mode: 0o644 });
    return true;
  }
  const tmp = temporaryName(path);
  await writeFileAtomic(tmp, text, { mode: 0o644, staged: true });
  try {
    return (await moveNoClobber(tmp, path)) === 'moved';
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * Moves `from` to `to`, never over anything there ('taken'): link() fails on an existing name,
 * so nothing is overwritten even in a race; where the file system has no hard links, a check
 * then a rename. What arrives must be `expected` (device and inode) when given, else its name
 * was swapped meanwhile: the move is undone ('swapped').
 */
export async function moveNoClobber(
  from: string,
  to: string,
  expected?: Identity,
): Promise<'moved' | 'taken' | 'gone' | 'swapped'> {
  const arrived = async (undo: () => Promise<void>): Promise<boolean> => {
    if (!expected || (await sameFileAt(to, expected))) return true;
    await undo().catch(() => undefined);
    return false;
  };
  let linked = false;
  try {
    await link(from, to);
    linked = true;
    if (!(await arrived(() => unlink(to)))) return 'swapped';
    await unlink(from);
    return 'moved';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Gone from under us (moved by another instance): our link would be a second name of it.
    if (code === 'ENOENT') {
      if (linked) await rm(to, { force: true });
      return 'gone';
    }
    if (code === 'EEXIST') return 'taken';
    if (!linkRefused(err)) throw err;
  }
  if (await occupied(to)) return 'taken';
  await rename(from, to);
  return (await arrived(() => rename(to, from))) ? 'moved' : 'swapped';
}

/** Removes the regular files in `dir` that `match` names and that were untouched since `before` (ms since the epoch). */
export async function sweepOld(dir: string, match: (name: string) => boolean, before: number): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!match(name)) continue;
    const info = await lstat(join(dir, name)).catch(() => undefined);
    if (info?.isFile() && info.mtimeMs < before) await rm(join(dir, name), { force: true });
  }
}

/** Removes the regular file at `path`, if one is there; anything else (a folder of that name) stays. */
export async function removeFile(path: string): Promise<void> {
  if ((await lstat(path).catch(() => undefined))?.isFile()) await rm(path, { force: true }).catch(() => undefined);
}
