/**
 * Where each physical line of a file starts, in bytes, found in the raw bytes as they stream
 * past: the job index's way from a record's row (the scanner's numbering) to its byte offset,
 * without touching the grammar. A line ends at LF, CR or CRLF (once), as the scanner counts
 * rows (csv-scanner.ts countLineBreaks, and its record delimiters); an encoding whose line
 * breaks are single bytes (UTF-8, Windows-1252) is assumed, which the index checks.
 *
 * Only the lines not yet asked for are kept: a record is delivered once its bytes were scanned,
 * rows only grow, so the lines before the last one asked for are dropped. What is held is the
 * lines of the text the scanner has not delivered yet (a chunk, or one record up to
 * csvMaxRecordBytes).
 */
const LF = 10;
const CR = 13;

export class LineStarts {
  /** Start offsets of lines `first`, `first + 1`, … (a queue in `starts[head, tail)`). */
  private starts = new Float64Array(1024);
  private head = 0;
  private tail = 0;
  private first: number;
  /** The last chunk ended with CR: the next line starts after it, or after an LF right behind it. */
  private crAt = -1;

  /** `offset`: where line `line` starts (after a byte-order mark). */
  constructor(offset: number, line = 1) {
    this.first = line;
    this.push(offset);
  }

  /** Scans `chunk`, which starts at byte `offset` of the file. */
  scan(chunk: Uint8Array, offset: number): void {
    if (chunk.length === 0) return;
    let at = 0;
    if (this.crAt >= 0) {
      at = chunk[0] === LF ? 1 : 0;
      this.push(at === 1 ? offset + 1 : this.crAt + 1);
      this.crAt = -1;
    }
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    let lf = buf.indexOf(LF, at);
    let cr = buf.indexOf(CR, at);
    while (lf >= 0 || cr >= 0) {
      if (cr < 0 || (lf >= 0 && lf < cr)) {
        this.push(offset + lf + 1);
        lf = buf.indexOf(LF, lf + 1);
        continue;
      }
      // A CR: CRLF is one line break; a CR last in the chunk waits for the next chunk's first byte.
      if (cr + 1 === buf.length) {
        this.crAt = offset + cr;
        break;
      }
      const end = buf[cr + 1] === LF ? cr + 2 : cr + 1;
      this.push(offset + end);
      if (lf === cr + 1) lf = buf.indexOf(LF, end);
      cr = buf.indexOf(CR, end);
    }
  }

  /** The file has ended: a CR last in it ends its line. */
  end(): void {
    if (this.crAt >= 0) this.push(this.crAt + 1);
    this.crAt = -1;
  }

  /** The start of line `line`, forgetting the lines before it; -1 when that line is not known. */
  at(line: number): number {
    const i = this.head + (line - this.first);
    if (line < this.first || i >= this.tail) return -1;
    this.head = i;
    this.first = line;
    return this.starts[i];
  }

  private push(offset: number): void {
    if (this.tail === this.starts.length) {
      const live = this.tail - this.head;
      // Room is made by dropping the lines already asked for, and by doubling when most are live.
      if (live * 2 > this.starts.length) {
        const grown = new Float64Array(this.starts.length * 2);
        grown.set(this.starts.subarray(this.head, this.tail));
        this.starts = grown;
      } else this.starts.copyWithin(0, this.head, this.tail);
      this.head = 0;
      this.tail = live;
    }
    this.starts[this.tail++] = offset;
  }
}
