import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** O_NOFOLLOW: a link at the name fails (ELOOP); O_NONBLOCK: a FIFO put there cannot block the open. */
const OPEN_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens a file the dashboard found by listing a folder, for reading: never through a link
 * (a link planted in done/ could point at any file the process can read), and only when
 * what was opened is a regular file. The caller closes it.
 */
export async function openRegular(path: string): Promise<{ handle: FileHandle; stat: Stats } | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_NO_FOLLOW);
  } catch {
    return undefined;
  }
  const stat = await handle.stat().catch(() => undefined);
  if (!stat?.isFile()) {
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
