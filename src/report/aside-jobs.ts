import { SpoolFile } from '../storage/spool-file.js';

/**
 * The ended jobs a report spool could not hold in memory while an earlier job still runs: each
 * one's text (result.json's and errors.txt's, as the spool serialises them) appended to a
 * temporary file beside the spool's own (a SpoolFile, made on first use), and per job only
 * where its record starts. A record is [result.json's byte length, errors.txt's: 4 bytes each,
 * little-endian][result.json's text][errors.txt's lines].
 *
 * The file only grows while the spool lives, so a record, once made, stays where it is: a
 * snapshot taken now reads it later (from the file, or from the records it took while they
 * still waited for the disk), whatever was set aside or copied into the spool since.
 */
export class AsideJobs {
  /** Bytes of records made: on disk (the file's size), then queued. */
  private end = 0;
  private file: SpoolFile | undefined;
  /** Records made but not yet on disk, in stream order (the first ones may be being written). */
  private queued: Aside[] = [];
  /** Per job: 1 + where its record starts, 0 when it was never set aside. Made on first use. */
  private starts: Float64Array | undefined;

  constructor(
    private readonly beside: string,
    private readonly jobCount: number,
  ) {}

  /** Sets job `index`'s text aside; answers the bytes that now wait for the disk. */
  put(index: number, json: string, errors: string): number {
    const jsonBytes = Buffer.byteLength(json);
    const bytes = Buffer.allocUnsafe(HEAD_BYTES + jsonBytes + Buffer.byteLength(errors));
    bytes.writeUInt32LE(jsonBytes, 0);
    bytes.writeUInt32LE(bytes.length - HEAD_BYTES - jsonBytes, 4);
    bytes.write(json, HEAD_BYTES, 'utf8');
    bytes.write(errors, HEAD_BYTES + jsonBytes, 'utf8');
    this.mark(index);
    this.queued.push({ at: this.end, bytes });
    this.end += bytes.length;
    return bytes.length;
  }

  /**
   * Records job `index` as set aside without its text: the spool failed, and nothing is written
   * or read again. It takes a byte of the stream, so that a snapshot tells it from later ones.
   */
  skip(index: number): void {
    this.mark(index);
    this.end += 1;
  }

  private mark(index: number): void {
    this.starts ??= new Float64Array(this.jobCount);
    this.starts[index] = this.end + 1;
  }

  /** What is set aside now, read later: the jobs set aside so far and their text, whatever follows. */
  view(): AsideView {
    const end = this.end;
    const queued = [...this.queued];
    return {
      holds: (index) => this.holds(index, end),
      text: (index) => this.text(index, queued),
    };
  }

  /** Whether job `index` was set aside before the stream reached `end`. */
  private holds(index: number, end: number): boolean {
    const start = this.starts?.[index] ?? 0;
    return start !== 0 && start - 1 < end;
  }

  /** Job `index`'s text (it was set aside): from the records `queued` when among them, else from the file. */
  text(index: number, queued: readonly Aside[] = this.queued): AsideText {
    const at = (this.starts?.[index] ?? 0) - 1;
    if (at < 0) throw new Error(`job ${index} was not set aside`);
    const record = queuedAt(queued, at) ?? this.read(at);
    const jsonEnd = HEAD_BYTES + record.readUInt32LE(0);
    return { json: record.subarray(HEAD_BYTES, jsonEnd), errors: record.subarray(jsonEnd) };
  }

  private read(at: number): Buffer {
    if (this.file === undefined) throw new Error(`no job's text was set aside at byte ${at}`);
    const head = this.file.readSync(at, HEAD_BYTES);
    return this.file.readSync(at, HEAD_BYTES + head.readUInt32LE(0) + head.readUInt32LE(4));
  }

  /** Whether records wait for the disk. */
  get waiting(): boolean {
    return this.queued.length > 0;
  }

  /**
   * Appends the records queued now to the file (made first, beside `beside`); answers their
   * bytes. Its caller writes one at a time.
   */
  async write(): Promise<number> {
    const n = this.queued.length;
    if (n === 0) return 0;
    const data = Buffer.concat(this.queued.map((q) => q.bytes));
    this.file ??= await SpoolFile.create(this.beside);
    await this.file.write(data, this.file.size);
    // One step: a reader finds each record once, queued or on disk.
    this.file.size += data.length;
    this.queued = this.queued.slice(n);
    return data.length;
  }

  /** Throws unless the file, when there is one, is still where it was made. */
  async verify(): Promise<void> {
    await this.file?.verify();
  }

  /** Forgets the queued records and removes the file (once there is one; later calls do nothing more). */
  async remove(): Promise<void> {
    this.queued = [];
    await this.file?.remove();
  }
}

/** One job's record waiting for the disk, and where it starts in the file. */
interface Aside {
  at: number;
  bytes: Buffer;
}

/** A job's text as set aside: its part of result.json, its lines of errors.txt. */
export interface AsideText {
  json: Buffer;
  errors: Buffer;
}

/** What was set aside when the view was taken (AsideJobs.view). */
export interface AsideView {
  holds(index: number): boolean;
  text(index: number): AsideText;
}

/** The record lengths before each record's text. */
const HEAD_BYTES = 8;

/** The queued record that starts at `at`, if any (records are in stream order). */
function queuedAt(queued: readonly Aside[], at: number): Buffer | undefined {
  let lo = 0;
  let hi = queued.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const q = queued[mid] as Aside;
    if (q.at === at) return q.bytes;
    if (q.at < at) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}
