/**
 * The sizes a zip file's central directory declares for its entries, read from the end of the
 * file without unpacking anything: a workbook that would unpack to gigabytes (a zip bomb, or
 * just a huge export) is refused before exceljs unpacks a byte. Declared sizes are what honest
 * writers and classic bombs state; a file that lies about them is caught by nothing here, which
 * is why the row and column caps still apply while streaming.
 */
import { open } from 'node:fs/promises';

const EOCD_SIGNATURE = 0x06054b50;
const ENTRY_SIGNATURE = 0x02014b50;
/** End-of-central-directory record (22 bytes) plus the longest comment a zip may carry. */
const EOCD_SEARCH_BYTES = 22 + 0xffff;
const MAX_DIRECTORY_BYTES = 16 * 1024 * 1024;

/** Total declared unpacked bytes of every entry; undefined when the file has no readable directory. */
export async function declaredUnpackedBytes(file: string): Promise<number | undefined> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const tailLength = Math.min(size, EOCD_SEARCH_BYTES);
    const tail = Buffer.alloc(tailLength);
    await handle.read(tail, 0, tailLength, size - tailLength);
    let eocd = -1;
    for (let i = tailLength - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === EOCD_SIGNATURE) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) return undefined;
    const directoryBytes = tail.readUInt32LE(eocd + 12);
    const directoryOffset = tail.readUInt32LE(eocd + 16);
    // Zip64 (a directory past 4 GB, or too big to be a workbook's): unknowable here, so "huge".
    if (directoryOffset === 0xffffffff || directoryBytes > MAX_DIRECTORY_BYTES) return Number.POSITIVE_INFINITY;
    if (directoryOffset + directoryBytes > size) return undefined;
    const directory = Buffer.alloc(directoryBytes);
    await handle.read(directory, 0, directoryBytes, directoryOffset);
    let total = 0;
    for (let p = 0; p + 46 <= directory.length && directory.readUInt32LE(p) === ENTRY_SIGNATURE; ) {
      const unpacked = directory.readUInt32LE(p + 24);
      if (unpacked === 0xffffffff) return Number.POSITIVE_INFINITY;
      total += unpacked;
      p += 46 + directory.readUInt16LE(p + 28) + directory.readUInt16LE(p + 30) + directory.readUInt16LE(p + 32);
    }
    return total;
  } finally {
    await handle.close();
  }
}
