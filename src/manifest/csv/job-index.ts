/**
 * A template CSV's jobs read on demand: one streaming pass (`indexCsvJobs`) through the same
 * scanner, dialect and limits as the whole read (read-csv.ts) hashes the file and keeps, per
 * job, only where its rows are (record-table.ts); a JobReader (`openJobs`, or `readJobs` for one
 * window) then reads a window of jobs' rows again (positioned reads through one open handle,
 * adjacent rows in one read), proves they are the bytes indexed (block-prints.ts), and builds
 * them with the same CsvDocumentBuilder, so every value, diagnostic and source location is the
 * whole read's. Memory then depends on the window, not on the file: the index of 1,000,000 jobs
 * of 5 rows is a few tens of MB of typed arrays (`npm run bench:job-index`).
 *
 * The default template only (no mapping), in an encoding whose line breaks are single bytes
 * (UTF-8, Windows-1252); a UTF-16 file is refused (JobIndexUnsupported), to be read whole.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { Diagnostic, ManifestJob, SourceMap } from '../model.js';
import { buildManifest } from '../build-manifest.js';
import { type CsvLimits, unreadDocument } from '../read-input.js';
import { CsvScanner, type CsvScanHandlers } from './csv-scanner.js';
import { type Binding, planColumns } from './column-plan.js';
import { CsvDocumentBuilder, orderNumberOf } from './document-builder.js';
import { ownCopy } from './cells.js';
import { csvSourceMap } from './csv-source-map.js';
import { readInto } from './read-csv.js';
import { SNIFF_BYTES } from './sniff.js';
import { LineStarts } from './line-starts.js';
import { RecordTable } from './record-table.js';
import { BlockPrints, PRINT_BLOCK } from './block-prints.js';
import type { CsvRead } from '../model.js';
import { StringColumn } from '../../core/string-column.js';

/** What says a file is still the one indexed, as fstat gives it at the end of the pass. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

export interface JobIndexOptions {
  /** Caps on columns, record and file size; defaults DEFAULT_CSV_LIMITS (as the whole read). */
  csv?: Partial<CsvLimits>;
}

/** The file is not the one indexed any more (replaced, edited, shortened): nothing of it is read as jobs. */
export class CsvFileChanged extends Error {
  readonly code = 'input.changed';
  constructor(file: string, what: string) {
    super(`${file} changed after it was read for its jobs (${what}); read the file again`);
  }
}

/** The input cannot be indexed (UTF-16: line breaks of two bytes); read it whole instead. */
export class JobIndexUnsupported extends Error {}

export interface CsvJobIndex {
  file: string;
  /** SHA-256 of the file's bytes, hex, as the whole read gives it ('' when the file stopped parsing). */
  sha256: string;
  /** Jobs in order of first appearance: the whole read's Manifest.jobs are [0, jobCount). 0: no document. */
  jobCount: number;
  recordCount: number;
  /** The whole read's diagnostics about the file itself (its header, a parse error, a limit). */
  diagnostics: Diagnostic[];
  /** How many of `diagnostics` are the header's; the rest are the scanner's problems. */
  headerDiagnostics?: number;
  /** The separator and encoding the file was read in. */
  read?: CsvRead;
  header?: { cells: string[]; row: number; start: number; end: number };
  identity?: FileIdentity;
  /** Bytes of the index's own tables (typed arrays, outside the JavaScript heap). */
  tableBytes: number;
  /**
   * Each job's order number as the whole read gives it (none: a row without one), noted by the
   * pass that grouped the rows: what names the jobs without reading any of them again.
   */
  orderNumbers?: StringColumn;
  /** @internal */
  readonly tables?: IndexTables;
}

interface IndexTables {
  records: RecordTable;
  prints: BlockPrints;
  limits: CsvLimits;
  /** Where the file's bytes end: the last record's end. */
  size: number;
}

/** Jobs [from, to) of an indexed file, as the whole read gives them. */
export interface JobWindow {
  from: number;
  to: number;
  /** The whole read's Manifest.jobs.slice(from, to). */
  jobs: ManifestJob[];
  /** The whole read's diagnostics of these jobs (`jobs[i]…`, i the index in the whole file), uncapped. */
  diagnostics: Diagnostic[];
  /** For paths of these jobs, the whole read's locations. */
  sources: SourceMap;
  /** The jobs as the document holds them before the manifest is built (what the schema validates). */
  doc: unknown[];
}

/** Streams `file` once and returns its index; never throws for a problem of the input (diagnostics say). */
export async function indexCsvJobs(file: string, opts: JobIndexOptions = {}): Promise<CsvJobIndex> {
  const pass = new IndexPass(file, opts.csv);
  const failed = await readInto(
    file,
    pass.scanner.limits,
    async (chunk) => pass.take(chunk),
    async (handle) => pass.end(handle),
  );
  if (failed !== undefined) {
    const { diagnostics } = unreadDocument(file, 'csv', failed);
    return { file, sha256: '', jobCount: 0, recordCount: 0, diagnostics, tableBytes: 0 };
  }
  return pass.finish();
}

/** The one pass: every chunk to the hash, the block prints, the line starts and the scanner. */
class IndexPass implements CsvScanHandlers {
  readonly scanner: CsvScanner;
  private readonly hash = createHash('sha256');
  private readonly prints = new BlockPrints();
  private lines: LineStarts | undefined;
  private readonly records = new RecordTable();
  /** Order number → job, needed only while indexing: the whole read's grouping. */
  private readonly byOrderNumber = new Map<string, number>();
  /** Per job, its order number (the map's keys, with the jobs of rows without one). */
  private readonly orderNumbers: Array<string | undefined> = [];
  private lastOrderNumber: string | undefined;
  private lastJob = 0;
  private binding: Binding | undefined;
  private readonly headerOnly: CsvDocumentBuilder;
  private headerAt: CsvJobIndex['header'];
  private offset = 0;
  private identity: FileIdentity | undefined;
  /** A row whose offset was not found: the line count and the scanner's rows disagree. */
  private lost = false;

  constructor(
    private readonly file: string,
    limits: Partial<CsvLimits> | undefined,
  ) {
    this.scanner = new CsvScanner({ skipRows: 0 }, this, { limits });
    this.headerOnly = new CsvDocumentBuilder(file, 0);
  }

  take(chunk: Buffer): boolean {
    // Line 1 starts after a UTF-8 byte-order mark (a UTF-16 file is refused at the end).
    this.lines ??= new LineStarts(chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0);
    this.hash.update(chunk);
    this.prints.add(chunk);
    this.lines.scan(chunk, this.offset);
    this.offset += chunk.length;
    this.scanner.push(chunk);
    return this.scanner.stopped;
  }

  async end(handle: FileHandle): Promise<void> {
    const { dev, ino, size, mtimeMs } = await handle.stat();
    this.identity = { dev, ino, size, mtimeMs };
  }

  header(cells: string[], row: number): void {
    this.headerOnly.header(cells, row);
    this.binding = planColumns(cells, this.file, row).orderNumber;
    this.headerAt = { cells, row, start: this.lineAt(row), end: this.offset };
  }

  record(cells: string[], row: number): void {
    const binding = this.binding;
    if (binding === undefined) return; // no orderNumber column: no document, reported at the header
    const offset = this.lineAt(row);
    const orderNumber = orderNumberOf(cells, binding);
    let j: number;
    if (orderNumber === undefined) j = this.addJob(undefined);
    else if (orderNumber === this.lastOrderNumber) j = this.lastJob;
    else {
      const own = ownCopy(orderNumber);
      const seen = this.byOrderNumber.get(own);
      j = seen ?? this.addJob(own);
      if (seen === undefined) this.byOrderNumber.set(own, j);
      this.lastOrderNumber = own;
      this.lastJob = j;
    }
    this.records.add(offset, row, j);
  }

  private addJob(orderNumber: string | undefined): number {
    const j = this.records.addJob();
    this.orderNumbers[j] = orderNumber;
    return j;
  }

  async finish(): Promise<CsvJobIndex> {
    this.lines?.end();
    await this.scanner.finish();
    this.prints.end();
    this.records.seal();
    const { file, scanner, records, identity } = this;
    const read = scanner.read;
    if (read.encoding === 'utf-16le' || read.encoding === 'utf-16be')
      throw new JobIndexUnsupported(`${file} is ${read.encoding}: its jobs are read from the whole file`);
    if (this.lost) throw new Error(`${file}: the job index lost a row's position (a defect of the index)`);
    const broken = scanner.stopped;
    if (!broken && identity !== undefined && identity.size !== this.offset)
      throw new CsvFileChanged(file, `${this.offset} bytes read, ${identity.size} at the end`);
    const header = this.headerAt;
    if (header !== undefined) header.end = records.recordCount > 0 ? records.offsetOf(0) : this.offset;
    const jobCount = broken ? 0 : records.jobCount;
    const diagnostics = this.fileDiagnostics(broken, jobCount);
    return {
      file,
      sha256: broken ? '' : this.hash.digest('hex'),
      jobCount,
      recordCount: records.recordCount,
      diagnostics,
      headerDiagnostics: diagnostics.length - this.scanner.problems.length,
      read,
      ...(header !== undefined ? { header } : {}),
      ...(identity !== undefined ? { identity } : {}),
      tableBytes: records.bytes + this.prints.bytes,
      ...(jobCount > 0 ? { orderNumbers: columnOf(this.orderNumbers, jobCount) } : {}),
      tables: { records, prints: this.prints, limits: scanner.limits, size: this.offset },
    };
  }

  /**
   * The whole read's diagnostics of the file (readCsvDocument, TemplateReader.document): the
   * header's, "no rows" when there are none, then the scanner's problems. Not the per-code
   * "… and N more" lines: those count the jobs' diagnostics, which come with the jobs.
   */
  private fileDiagnostics(broken: boolean, jobCount: number): Diagnostic[] {
    const { file } = this;
    const own = this.headerOnly.result().diagnostics;
    const kept = broken || jobCount > 0 ? own.filter((d) => d.code !== 'csv.no-rows') : own;
    for (const { code, message, row } of this.scanner.problems)
      kept.push({ severity: 'error', code, message, source: row === undefined ? { file } : { file, row } });
    return kept;
  }

  private lineAt(row: number): number {
    const offset = this.lines?.at(row) ?? -1;
    if (offset < 0) this.lost = true;
    return offset;
  }
}

function columnOf(texts: ReadonlyArray<string | undefined>, count: number): StringColumn {
  const column = new StringColumn(count);
  for (let j = 0; j < count; j++) {
    const text = texts[j];
    if (text !== undefined) column.set(j, text);
  }
  return column;
}

/**
 * Jobs [from, to) of an indexed file, read again and built as the whole read builds them
 * (JobReader.read through a handle of its own). Throws CsvFileChanged when the file is not the
 * one indexed, a RangeError for a window outside [0, jobCount).
 */
export async function readJobs(index: CsvJobIndex, from: number, to: number): Promise<JobWindow> {
  checkWindow(index, from, to);
  if (from === to) return emptyWindow(index, from, to);
  const reader = await openJobs(index);
  try {
    return await reader.read(from, to);
  } finally {
    await reader.close();
  }
}

/** An indexed file's jobs, window after window, through one open handle; `close()` when done. */
export interface JobReader {
  /**
   * Jobs [from, to), as the whole read gives them. Throws CsvFileChanged when the bytes read are
   * not the bytes indexed (the file edited in place, shortened), never reading them as other
   * jobs; a RangeError for a window outside [0, jobCount).
   */
  read(from: number, to: number): Promise<JobWindow>;
  close(): Promise<void>;
}

/**
 * Opens the indexed file, once its identity (device, inode, size, time) is the index's: another
 * file by its name, or the file grown or touched, is refused (CsvFileChanged). The handle then
 * reads the file indexed even if another takes its name; an edit in place is caught by the
 * blocks' prints.
 */
export async function openJobs(index: CsvJobIndex): Promise<JobReader> {
  const { file, identity } = index;
  const handle = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new CsvFileChanged(file, `cannot open it: ${err.code ?? String(err)}`);
  });
  const now = await handle.stat().catch(async (err) => {
    await handle.close();
    throw err;
  });
  if (!sameFile(identity, now)) {
    await handle.close();
    throw new CsvFileChanged(file, 'another file, or its size or time changed');
  }
  // One implementation of a window's read: the synchronous one (JobReaderSync), through the handle's descriptor.
  return { read: async (from, to) => readWindow(index, handle.fd, from, to), close: () => handle.close() };
}

function sameFile(identity: FileIdentity | undefined, now: FileIdentity): boolean {
  return (
    identity !== undefined &&
    now.dev === identity.dev &&
    now.ino === identity.ino &&
    now.size === identity.size &&
    now.mtimeMs === identity.mtimeMs
  );
}

/** JobReader's synchronous twin, for a list of jobs read on demand by synchronous callers (job-view.ts). */
export interface JobReaderSync {
  read(from: number, to: number): JobWindow;
  close(): void;
}

/** openJobs, synchronously: the same identity check, then positioned reads through one descriptor. */
export function openJobsSync(index: CsvJobIndex): JobReaderSync {
  const { file, identity } = index;
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw new CsvFileChanged(file, `cannot open it: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    if (!sameFile(identity, fstatSync(fd))) throw new CsvFileChanged(file, 'another file, or its size or time changed');
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return { read: (from, to) => readWindow(index, fd, from, to), close: () => closeSync(fd) };
}

function checkWindow(index: CsvJobIndex, from: number, to: number): void {
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to > index.jobCount || from > to)
    throw new RangeError(`jobs [${from}, ${to}) are not within the ${index.jobCount} jobs of ${index.file}`);
}

function emptyWindow(index: CsvJobIndex, from: number, to: number): JobWindow {
  return { from, to, jobs: [], diagnostics: [], sources: windowSources(index, from, to, undefined), doc: [] };
}

function readWindow(index: CsvJobIndex, fd: number, from: number, to: number): JobWindow {
  checkWindow(index, from, to);
  const { tables, header, read } = index;
  if (from === to || tables === undefined || header === undefined || read === undefined)
    return emptyWindow(index, from, to);
  const records = tables.records.recordsOf(from, to);
  const runs = runsOf(tables, records);
  const bytes = readIndexed(fd, index.file, tables, [[header.start, header.end], ...runs]);
  const builder = new CsvDocumentBuilder(index.file, 0, undefined, Number.POSITIVE_INFINITY);
  builder.header(header.cells, header.row);
  scanWindow(index, bytes, records, builder);
  const parts = builder.result();
  const jobs = parts.doc?.jobs ?? [];
  // The document's own list, before building the manifest (which may copy an item): what the schema sees.
  const doc = jobs.slice();
  if (jobs.length !== to - from)
    throw new CsvFileChanged(index.file, `${jobs.length} jobs where ${to - from} were indexed`);
  const raw = { file: index.file, format: 'csv' as const, sha256: index.sha256, doc: parts.doc, diagnostics: [] };
  const manifest = buildManifest({ ...raw, sources: { locate: () => ({ file: index.file }) } });
  const diagnostics: Diagnostic[] = [];
  for (const d of parts.diagnostics) {
    const m = d.field === undefined ? null : JOB_PATH.exec(d.field);
    // The header's own findings are the index's (CsvJobIndex.diagnostics).
    if (m !== null) diagnostics.push({ ...d, field: `jobs[${Number(m[1]) + from}]${d.field?.slice(m[0].length)}` });
  }
  const sources = windowSources(index, from, to, csvSourceMap(index.file, parts));
  return { from, to, jobs: manifest?.jobs ?? [], diagnostics, sources, doc };
}

const JOB_PATH = /^jobs\[(\d+)\]/;
const NEWLINE = Buffer.from('\n');

/**
 * A window's SourceMap: a job's path is located as `jobs[i - from]…` in the window's own map,
 * whose tables are the window's. A path outside the jobs (or past the last job) has the
 * header's location, as in the whole read; a job outside the window is a caller's mistake.
 */
function windowSources(index: CsvJobIndex, from: number, to: number, own: SourceMap | undefined): SourceMap {
  const header = { file: index.file, ...(index.header !== undefined ? { row: index.header.row } : {}) };
  const locate = (path: string) => {
    const m = JOB_PATH.exec(path);
    const j = m === null ? -1 : Number(m[1]);
    if (m === null || j >= index.jobCount || own === undefined) return header;
    if (j < from || j >= to) throw new RangeError(`${path}: job ${j} is not in this window [${from}, ${to})`);
    return own.locate(`jobs[${j - from}]${path.slice(m[0].length)}`);
  };
  return { locate, locateKey: locate };
}

/** Runs of adjacent records as byte ranges [start, end): each one read. */
function runsOf(tables: IndexTables, records: Int32Array): Array<[number, number]> {
  const { records: table, size } = tables;
  const endOf = (k: number) => (k + 1 < table.recordCount ? table.offsetOf(k + 1) : size);
  const runs: Array<[number, number]> = [];
  for (let p = 0; p < records.length; p++) {
    const k = records[p];
    if (p > 0 && records[p - 1] === k - 1) runs[runs.length - 1][1] = endOf(k);
    else runs.push([table.offsetOf(k), endOf(k)]);
  }
  return runs;
}

/**
 * The bytes of `ranges` (in file order). The blocks holding them are read whole, ranges whose
 * blocks meet (or nearly) in one read, and each block they lie in must have the print taken
 * when indexing.
 */
function readIndexed(fd: number, file: string, tables: IndexTables, ranges: Array<[number, number]>): Buffer[] {
  const out: Buffer[] = [];
  const groups = blockGroups(ranges);
  const read = groups.map((g) => {
    const at = g.first * PRINT_BLOCK;
    return readFully(fd, at, Math.min(g.end * PRINT_BLOCK, tables.size) - at, file);
  });
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g];
    const at = group.first * PRINT_BLOCK;
    const bytes = read[g];
    // Each block a range lies in is proven once; the blocks between ranges are read, not used.
    let proven = group.first - 1;
    for (const [start, end] of group.ranges) {
      const endBlock = Math.max(Math.floor(start / PRINT_BLOCK) + 1, Math.ceil(end / PRINT_BLOCK));
      for (let b = Math.max(proven + 1, Math.floor(start / PRINT_BLOCK)); b < endBlock; b++) {
        const block = bytes.subarray((b - group.first) * PRINT_BLOCK, (b - group.first + 1) * PRINT_BLOCK);
        if (!tables.prints.matches(b, block))
          throw new CsvFileChanged(file, `its bytes from ${b * PRINT_BLOCK} differ`);
        proven = b;
      }
      out.push(bytes.subarray(start - at, end - at));
    }
  }
  return out;
}

interface BlockGroup {
  first: number;
  end: number;
  ranges: Array<[number, number]>;
}

/**
 * Blocks between two ranges read rather than skipped, up to this many: from the page cache a
 * read's own cost is that of copying some 32 KiB, so rows scattered over the file take fewer
 * reads (`node bench/job-index.mjs --scatter 2`).
 */
const GAP_BLOCKS = 8;

/** Ranges grouped by the blocks they lie in: ranges whose blocks meet, or nearly, make one read. */
function blockGroups(ranges: Array<[number, number]>): BlockGroup[] {
  const groups: BlockGroup[] = [];
  for (const range of ranges) {
    const first = Math.floor(range[0] / PRINT_BLOCK);
    const end = Math.max(first + 1, Math.ceil(range[1] / PRINT_BLOCK));
    const last = groups[groups.length - 1];
    if (last !== undefined && first <= last.end + GAP_BLOCKS) {
      last.end = Math.max(last.end, end);
      last.ranges.push(range);
    } else groups.push({ first, end, ranges: [range] });
  }
  return groups;
}

function readFully(fd: number, position: number, length: number, file: string): Buffer {
  const buf = Buffer.allocUnsafe(length);
  for (let got = 0; got < length; ) {
    const bytesRead = readSync(fd, buf, got, length - got, position + got);
    if (bytesRead === 0) throw new CsvFileChanged(file, 'it is shorter');
    got += bytesRead;
  }
  return buf;
}

/**
 * The header's bytes, then the records', through a scanner in the dialect the file was read in:
 * at a record's start the grammar has no state, so each record reads as it did in the file.
 * The rows are the index's. Blank lines after the header when the rows hold a NUL byte, which
 * the scanner's first look would take for binary data (the whole read's looked at the file's
 * own first bytes).
 */
function scanWindow(index: CsvJobIndex, bytes: Buffer[], records: Int32Array, builder: CsvDocumentBuilder): void {
  const table = (index.tables as IndexTables).records;
  const read = index.read as CsvRead;
  let next = -1;
  const handlers: CsvScanHandlers = {
    header: () => {
      next = 0;
    },
    record: (cells) => {
      if (next >= 0 && next < records.length) builder.record(cells, table.rowOf(records[next]));
      next++;
    },
  };
  const limits = { ...(index.tables as IndexTables).limits, maxFileBytes: Number.MAX_SAFE_INTEGER };
  const dialect = { delimiter: read.delimiter, encoding: read.encoding, skipRows: 0 };
  const scanner = new CsvScanner(dialect, handlers, { limits });
  // Two pushes: the scanner holds its first bytes until it has enough to judge them and judges
  // all it holds then, so the header and blank lines go first, alone (the rows may hold a NUL
  // byte); then every record, and a line break after the last, so that each record is
  // delivered within push() and no finish() (which csv-parse may settle on a later tick) is needed.
  scanner.push(Buffer.concat([bytes[0], Buffer.alloc(SNIFF_BYTES, 10)]));
  scanner.push(Buffer.concat([...bytes.slice(1), NEWLINE]));
  if (scanner.stopped || next !== records.length)
    throw new CsvFileChanged(index.file, `${Math.max(next, 0)} rows read where ${records.length} were indexed`);
}
