/**
 * Output gathered as bytes in one reusable buffer, for result.csv of a CSV input: bytes and
 * digits are written straight in, rather than built as strings that are then flattened and
 * encoded. flush() hands out a view of the buffer, valid until the next write: safe, as
 * writeFileAtomic writes each chunk before asking for the next.
 */
export class ByteOutput {
  private buf: Buffer;
  length = 0;

  /** Starts small (most reports are a few kB: `watch`'s one-order inputs) and doubles as output grows. */
  constructor(size = (Buffer.poolSize >>> 1) - 1) {
    this.buf = Buffer.allocUnsafe(size);
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
