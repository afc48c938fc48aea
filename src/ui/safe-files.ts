import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** O_NOFOLLOW: a link at the name fails (ELOOP); O_NONBLOCK: a FIFO put there cannot block the open. */
const OPEN_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const OPEN_FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Where the kernel names an open folder (Linux): a path through it resolves inside the very
 * folder that was opened, whatever its name points at by then — the openat Node lacks.
 */
const FD_FOLDER = existsSync('/proc/self/fd') ? '/proc/self/fd' : undefined;

export interface OpenFolder {
  /** The path to list and open names under: through the open folder where the system allows. */
  base: string;
  /** Whether `dir` still names the folder that was opened (checked again after the act without FD_FOLDER). */
  still(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Opens a folder the dashboard reads: never through a link at its own name (a dropper may swap
 * done/ for a link to another tenant's folder). Names are then resolved inside the folder that
 * was opened; where the system has no way to, the caller asks `still()` after reading and drops
 * what it read when the name was swapped meanwhile (device and inode differ).
 */
export async function openFolder(dir: string): Promise<OpenFolder | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(dir, OPEN_FOLDER);
  } catch {
    return undefined;
  }
  const opened = await handle.stat().catch(() => undefined);
  if (!opened?.isDirectory()) {
    await handle.close();
    return undefined;
  }
  const still = async (): Promise<boolean> => {
    if (FD_FOLDER) return true;
    const now = await lstat(dir).catch(() => undefined);
    return now?.isDirectory() === true && now.dev === opened.dev && now.ino === opened.ino;
  };
  return { base: FD_FOLDER ? join(FD_FOLDER, String(handle.fd)) : dir, still, close: () => handle.close() };
}

/**
 * Opens a file the dashboard found by listing a folder, for reading: never through a link,
 * neither at its name nor at its folder's (a link planted in done/, or done/ swapped for one,
 * could lead to any file the process can read), and only when what was opened is a regular
 * file. The caller closes it.
 */
export async function openRegular(path: string): Promise<{ handle: FileHandle; stat: Stats } | undefined> {
  const folder = await openFolder(dirname(path));
  if (!folder) return undefined;
  let handle: FileHandle;
  try {
    handle = await open(join(folder.base, basename(path)), OPEN_NO_FOLLOW);
  } catch {
    await folder.close();
    return undefined;
  }
  const stat = await handle.stat().catch(() => undefined);
  const kept = stat?.isFile() === true && (await folder.still());
  await folder.close();
  if (!kept || !stat) {
    await handle.close();
    return undefined;
  }
  return { handle, stat };
}

/** The first `maxBytes` of a regular file (and whether there was more), or undefined. */
export async function readHead(path: string, maxBytes: number): Promise<{ bytes: Buffer; whole: boolean } | undefined> {
  const opened = await openRegular(path);
  if (!opened) return undefined;
  try {
    const size = Math.min(opened.stat.size, maxBytes);
    const bytes = Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await opened.handle.read(bytes, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return { bytes: bytes.subarray(0, at), whole: opened.stat.size <= maxBytes };
  } finally {
    await opened.handle.close();
  }
}

/**
 * Text of an input for showing its lines: UTF-8, UTF-16 with a byte-order mark, or (when
 * the bytes are not UTF-8) Windows-1252, the encodings a mapping can name.
 */
export function decodeText(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}
