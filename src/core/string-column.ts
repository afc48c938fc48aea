/**
 * A string per index, kept in one buffer outside the JavaScript heap: each as Latin-1 bytes, or
 * as UTF-16 when it has a code unit past 0xFF (lone surrogates included, read back as they
 * were). An order number of ten characters takes 18 bytes here, where its own string took 32
 * on the heap, which the heap's growth then multiplies; a string is made anew at each read.
 */
export class StringColumn {
  /** Per index: where its bytes start. */
  private readonly starts: Uint32Array;
  /** Per index: 0 when unset, else 1 + its byte count, the top bit set for UTF-16. */
  private readonly lengths: Uint32Array;
  private bytes: Buffer;
  private end = 0;

  constructor(readonly size: number) {
    this.starts = new Uint32Array(size);
    this.lengths = new Uint32Array(size);
    this.bytes = Buffer.alloc(Math.min(Math.max(size, 16) * 12, 1 << 20));
  }

  /** Keeps `text` as index `i`'s (a second set keeps the new text; the old bytes stay unused). */
  set(i: number, text: string): void {
    if (!(Number.isInteger(i) && i >= 0 && i < this.size)) throw new RangeError(`no index ${i} among ${this.size}`);
    const wide = !isLatin1(text);
    const length = wide ? text.length * 2 : text.length;
    if (length >= WIDE - 1) throw new RangeError(`a string of ${text.length} characters is past what the column holds`);
    if (this.end + length > this.bytes.length) this.grow(length);
    this.bytes.write(text, this.end, length, wide ? 'utf16le' : 'latin1');
    this.starts[i] = this.end;
    this.lengths[i] = ((length + 1) | (wide ? WIDE : 0)) >>> 0;
    this.end += length;
  }

  /** Index `i`'s text; undefined when it was never set. */
  get(i: number): string | undefined {
    const stored = this.lengths[i];
    if (stored === undefined || stored === 0) return undefined;
    const start = this.starts[i];
    const length = (stored & ~WIDE) - 1;
    return this.bytes.toString(stored & WIDE ? 'utf16le' : 'latin1', start, start + length);
  }

  private grow(more: number): void {
    const size = Math.max(this.bytes.length * 2, this.end + more);
    if (size > MAX_BYTES) throw new RangeError(`the column's strings are past ${MAX_BYTES} bytes`);
    const grown = Buffer.alloc(size);
    this.bytes.copy(grown, 0, 0, this.end);
    this.bytes = grown;
  }
}

const WIDE = 0x80000000;
/** Offsets are 32-bit. */
const MAX_BYTES = 2 ** 32 - 1;

function isLatin1(text: string): boolean {
  for (let c = 0; c < text.length; c++) if (text.charCodeAt(c) > 0xff) return false;
  return true;
}
