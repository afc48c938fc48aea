/**
 * Output gathered as bytes in one reusable buffer, for the big reports (result.csv's copied
 * records, result.json's items): bytes and digits are written straight in, rather than built as
 * strings that are then flattened and encoded. flush() hands out a view of the buffer, valid
 * until the next write: safe, as writeFileAtomic writes each chunk before asking
 * for the next.
 */
export class ByteOutput {
  private buf: Buffer;
  length = 0;

  /**
   * Starts small and doubles as output grows (a big report reaches its batch size in a few
   * copies): most reports are a few kB (`watch`'s one-order inputs), and a 2 MB buffer made for
   * each of them cost ~1.5 ms of CPU per input in old-generation collections, which V8 starts
   * when that much off-heap memory was allocated since the last. Under half of Buffer.poolSize
   * (8 kB), the first buffer is a slice of Node's shared pool, not an allocation of its own.
   */
  constructor(size = (Buffer.poolSize >>> 1) - 1) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** `src[start..end)`, or all of `src`. */
  bytes(src: Uint8Array, start = 0, end = src.length): void {
    this.reserve(end - start);
    this.buf.set(start === 0 && end === src.length ? src : src.subarray(start, end), this.length);
    this.length += end - start;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.length++] = b;
  }

  /** A non-negative safe integer's decimal digits, as `${n}` writes them. */
  digits(n: number): void {
    this.reserve(16);
    let end = this.length;
    for (let m = n; m >= 10; m = Math.floor(m / 10)) end++;
    this.length = end + 1;
    for (let m = n; ; m = Math.floor(m / 10)) {
      this.buf[end--] = 0x30 + (m % 10);
      if (m < 10) break;
    }
  }

  /** Text, as UTF-8. */
  text(s: string): void {
    this.reserve(s.length * 3); // UTF-8: at most 3 bytes per UTF-16 code unit
    this.length += this.buf.write(s, this.length, 'utf8');
  }

  /** A copy of what was written from offset `start` on (kept after the next flush). */
  copyFrom(start: number): Buffer {
    return Buffer.from(this.buf.subarray(start, this.length));
  }

  flush(): Buffer {
    const chunk = this.buf.subarray(0, this.length);
    this.length = 0;
    return chunk;
  }

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }
}
