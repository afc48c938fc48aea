/**
 * A fingerprint of every 4 KiB block of a file (the first 16 bytes of its SHA-256), taken as
 * the file streams past, so that bytes read again later can be proven to be the bytes indexed.
 * The file's identity (device, inode, size, time) does not prove it: an edit in place that
 * keeps the size within one tick of the clock, or a copy that restores the time (`cp -p`,
 * `rsync --inplace -t`, an archive unpacked), keeps all four. A cryptographic hash, not a CRC:
 * the input is not trusted, and a CRC's collisions are made on purpose in moments. 16 bytes per
 * 4 KiB: 2.5 MB for a 650 MB file; a job's rows cost at most two blocks' reading of extra bytes.
 */
import { hash } from 'node:crypto';

export const PRINT_BLOCK = 4096;
const PRINT_BYTES = 16;

export class BlockPrints {
  private prints = new Uint8Array(PRINT_BYTES * 256);
  private count = 0;
  /** The bytes of the block under way. */
  private readonly partial = Buffer.allocUnsafe(PRINT_BLOCK);
  private partialLength = 0;

  /** The file's next bytes. */
  add(chunk: Uint8Array): void {
    let at = 0;
    if (this.partialLength > 0) {
      at = Math.min(chunk.length, PRINT_BLOCK - this.partialLength);
      this.partial.set(chunk.subarray(0, at), this.partialLength);
      this.partialLength += at;
      if (this.partialLength < PRINT_BLOCK) return;
      this.keep(this.partial);
      this.partialLength = 0;
    }
    for (; at + PRINT_BLOCK <= chunk.length; at += PRINT_BLOCK) this.keep(chunk.subarray(at, at + PRINT_BLOCK));
    this.partial.set(chunk.subarray(at), 0);
    this.partialLength = chunk.length - at;
  }

  /** The file has ended: its last, shorter block. */
  end(): void {
    if (this.partialLength > 0) this.keep(this.partial.subarray(0, this.partialLength));
    this.partialLength = 0;
  }

  /** Whether `bytes`, the whole of block `b` (its end: the end of the file), are the bytes indexed. */
  matches(b: number, bytes: Uint8Array): boolean {
    if (b >= this.count) return false;
    const print = hash('sha256', bytes, 'buffer');
    return print.compare(this.prints, b * PRINT_BYTES, (b + 1) * PRINT_BYTES, 0, PRINT_BYTES) === 0;
  }

  get bytes(): number {
    return this.prints.byteLength;
  }

  private keep(block: Uint8Array): void {
    if ((this.count + 1) * PRINT_BYTES > this.prints.length) {
      const grown = new Uint8Array(this.prints.length * 2);
      grown.set(this.prints);
      this.prints = grown;
    }
    const print = hash('sha256', block, 'buffer');
    print.copy(this.prints, this.count * PRINT_BYTES, 0, PRINT_BYTES);
    this.count++;
  }
}
