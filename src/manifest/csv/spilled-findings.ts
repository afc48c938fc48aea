import { SpoolFile } from '../../storage/spool-file.js';
import { jobIndexOf } from '../field-path.js';
import type { Diagnostic, JobFindings } from '../model.js';

/** One window's findings as the check made them: its schema's and its rules', each in its order. */
export interface WindowFindings {
  from: number;
  to: number;
  schema: Diagnostic[];
  rules: Diagnostic[];
}

/** A window's findings as the whole read has them (windowed-read.ts), once every window is checked. */
type Assemble = (window: WindowFindings) => Diagnostic[];

/** Every window's findings (their schema's, their rules', each in file order) as the whole read has them. */
type AssembleAll = (schema: Diagnostic[], rules: Diagnostic[]) => Diagnostic[];

/**
 * A windowed read's schema and rule findings, each window's written out as soon as it is
 * checked, so that a file whose every row is faulty holds none of them while later windows are
 * checked, nor afterwards: its findings grow with its rows, and a run's memory must not. They go
 * to a private temporary file beside the input (SpoolFile: made exclusively, 0600, removed by
 * close() or as the process exits; a run names it as a temporary of the input's result.json, so
 * that one a killed process left goes with that report's other strays), one JSON record a
 * window, and come back a window at a time,
 * put together as the whole read has them (`assemble`: which of them to keep needs the whole file,
 * known only once every window is checked). In memory: per job whether it has an error, per
 * window where its record is, and the findings on no job (a file's, not a row's).
 */
export class SpilledFindings implements JobFindings {
  /** Per job: 1 when one of its findings is an error. */
  private readonly errors: Uint8Array;
  /** Per window: where its record starts, then its bytes (0: no finding). */
  private readonly spans: Float64Array;
  /** Per window: 1 once taken. */
  private readonly taken: Uint8Array;
  /** The findings on no job, in the order they were made. */
  readonly loose: { schema: Diagnostic[]; rules: Diagnostic[] } = { schema: [], rules: [] };
  private assemble: { window: Assemble; all: AssembleAll } | undefined;
  private closed = false;

  private constructor(
    private readonly file: SpoolFile,
    private readonly jobCount: number,
    private readonly windowJobs: number,
  ) {
    const windows = Math.ceil(jobCount / windowJobs);
    this.errors = new Uint8Array(jobCount);
    this.spans = new Float64Array(2 * windows);
    this.taken = new Uint8Array(windows);
  }

  /** For the findings of `jobCount` jobs checked `windowJobs` at a time, their file beside `beside`. */
  static async create(beside: string, jobCount: number, windowJobs: number): Promise<SpilledFindings> {
    let file: SpoolFile;
    try {
      file = await SpoolFile.create(beside);
    } catch (err) {
      // Said as the input's: its folder takes its reports too.
      throw new Error(`no temporary file for its findings could be made beside it (${(err as Error).message})`);
    }
    return new SpilledFindings(file, jobCount, windowJobs);
  }

  /** Writes out the findings of the window from job `from`, which are then let go. */
  async add(from: number, schema: Diagnostic[], rules: Diagnostic[]): Promise<void> {
    for (const list of [schema, rules])
      for (const d of list) {
        const j = jobIndexOf(d.field);
        if (j === undefined) (list === schema ? this.loose.schema : this.loose.rules).push(d);
      }
    this.mark(schema);
    this.mark(rules);
    if (schema.length === 0 && rules.length === 0) return;
    const bytes = Buffer.from(JSON.stringify([schema, rules]));
    const w = 2 * Math.floor(from / this.windowJobs);
    this.spans[w] = this.file.size;
    this.spans[w + 1] = bytes.length;
    await this.file.write(bytes, this.file.size);
    this.file.size += bytes.length;
  }

  /**
   * Every window is checked: from now on each window comes back as `window` puts it together
   * (and all of them as `all` does); `others` are the read's findings on jobs kept in memory
   * (their errors refuse their jobs too).
   */
  done(window: Assemble, others: readonly Diagnostic[], all: AssembleAll): void {
    this.mark(others);
    this.assemble = { window, all };
  }

  /** Every finding on the jobs and on none, in the whole read's order: all of them held at once (tests). */
  all(): Diagnostic[] {
    if (this.assemble === undefined) throw new Error('the findings are read back before every window was checked');
    const schema: Diagnostic[] = [];
    const rules: Diagnostic[] = [];
    for (let w = 0; w < this.taken.length; w++) {
      const window = this.window(w);
      schema.push(...window.schema);
      rules.push(...window.rules);
    }
    return this.assemble.all(schema, rules);
  }

  refuses(j: number): boolean {
    return this.errors[j] === 1;
  }

  take(j: number): Map<number, Diagnostic[]> | undefined {
    if (!Number.isInteger(j) || j < 0 || j >= this.jobCount) return undefined;
    const w = Math.floor(j / this.windowJobs);
    if (this.taken[w] === 1) return undefined;
    this.taken[w] = 1;
    const byJob = new Map<number, Diagnostic[]>();
    for (const d of this.assembled(w)) {
      const k = jobIndexOf(d.field);
      if (k === undefined) continue;
      const list = byJob.get(k);
      if (list === undefined) byJob.set(k, [d]);
      else list.push(d);
    }
    return byJob;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    void this.file.remove().catch(() => undefined);
  }

  /** Window `w`'s findings on its jobs, as the whole read has them. */
  private assembled(w: number): Diagnostic[] {
    if (this.assemble === undefined) throw new Error('the findings are read back before every window was checked');
    return this.assemble.window(this.window(w));
  }

  private window(w: number): WindowFindings {
    if (this.closed) throw new Error(`the findings of ${this.file.path} were let go`);
    const from = w * this.windowJobs;
    const to = Math.min(from + this.windowJobs, this.jobCount);
    const bytes = this.spans[2 * w + 1] ?? 0;
    if (bytes === 0) return { from, to, schema: [], rules: [] };
    const [schema, rules] = JSON.parse(this.file.readSync(this.spans[2 * w] ?? 0, bytes).toString('utf8')) as [
      Diagnostic[],
      Diagnostic[],
    ];
    return { from, to, schema, rules };
  }

  private mark(findings: readonly Diagnostic[]): void {
    for (const d of findings) {
      if (d.severity !== 'error') continue;
      const j = jobIndexOf(d.field);
      if (j !== undefined && j < this.jobCount) this.errors[j] = 1;
    }
  }
}
