import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';

/** The sticky bit of a folder's mode: only an entry's owner, the folder's owner or root may rename or remove it. */
const S_ISVTX = 0o1000;

/** What is judged of the dropped file and of the drop folder. */
export interface OwnedEntry {
  uid: number;
  mode: number;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * Pure: whether user `uid` may not rename or remove `file` in `folder`, nor rename another file
 * over it: the folder is sticky and neither the file nor the folder is the user's (root may).
 */
export function stickyStops(
  file: Pick<OwnedEntry, 'uid'>,
  folder: Pick<OwnedEntry, 'uid' | 'mode'>,
  uid: number | undefined = process.getuid?.(),
): boolean {
  if (uid === undefined || uid === 0 || (folder.mode & S_ISVTX) === 0) return false;
  return file.uid !== uid && folder.uid !== uid;
}

/**
 * Pure: why the watcher (user `uid`) may not move `file` out of the drop folder: the folder is
 * sticky and neither the file nor the folder is the watcher's user's. Undefined when that is not
 * the cause (another error, or root, whom the sticky bit does not stop).
 */
export function stickyRefusal(
  location: string,
  file: Pick<OwnedEntry, 'uid'>,
  folder: Pick<OwnedEntry, 'uid' | 'mode'>,
  uid: number | undefined = process.getuid?.(),
): string | undefined {
  if (!stickyStops(file, folder, uid)) return undefined;
  const me = `uid ${uid}${userName()}`;
  return (
    `it belongs to uid ${file.uid}, not to the watcher's user (${me}), and ${location} has the sticky bit ` +
    `and belongs to uid ${folder.uid}, so only the file's owner or the folder's owner may move it. It is not tried again ` +
    `until it or the folder changes. Fix: give the folder to the watcher's user (chown ${userInfoName() ?? uid} ${location}; keep it sticky), ` +
    `or drop files as the watcher's user`
  );
}

/**
 * What a refused file is remembered by: it is tried again once the file (another file at its
 * name, new content, a new owner: its ctime) or the folder's owner or mode changed.
 */
export function refusalKey(file: OwnedEntry, folder: Pick<OwnedEntry, 'uid' | 'mode'>): string {
  return [file.dev, file.ino, file.size, file.mtimeMs, file.ctimeMs, file.uid, folder.uid, folder.mode].join(':');
}

/** `, name` of the watcher's user, or nothing where it has none (a uid without a passwd entry). */
function userName(): string {
  const name = userInfoName();
  return name === undefined ? '' : `, ${name}`;
}

function userInfoName(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a scan of folder `location` refuses, told once per name (`tell`, with the fix): entries
 * that are no files, and files whose move out the sticky bit refused, left alone until they or
 * the folder change (refusalKey).
 */
export class StickyRefusals {
  private readonly stuck = new Map<string, string>();
  private readonly told = new Set<string>();

  constructor(
    private readonly location: string,
    private readonly tell: (name: string, why: string) => void,
  ) {}

  tellOnce(name: string, why: string): void {
    if (this.told.has(name)) return;
    this.told.add(name);
    this.tell(name, why);
  }

  /** The folder as a scan sees it, looked at only while some file is left alone. */
  async folder(): Promise<Stats | undefined> {
    return this.stuck.size > 0 ? await lstat(this.location).catch(() => undefined) : undefined;
  }

  /** Whether `name` (now `info`) is still left alone; forgotten once it or the folder changed. */
  leftAlone(name: string, info: Stats, folder: Stats | undefined): boolean {
    const key = this.stuck.get(name);
    if (key === undefined) return false;
    if (folder !== undefined && key === refusalKey(info, folder)) return true;
    this.stuck.delete(name);
    return false;
  }

  /** A rename of `name` refused with `err`: true when the sticky bit is why (told, and left alone), else false. */
  async refused(name: string, err: unknown): Promise<boolean> {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'EACCES') return false;
    const [file, folder] = await Promise.all([
      lstat(join(this.location, name)).catch(() => undefined),
      lstat(this.location).catch(() => undefined),
    ]);
    const why = file && folder && stickyRefusal(this.location, file, folder);
    if (!file || !folder || why === undefined) return false;
    this.stuck.set(name, refusalKey(file, folder));
    this.tell(name, why);
    return true;
  }
}
