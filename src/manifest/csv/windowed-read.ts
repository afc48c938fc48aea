/**
 * A big template CSV read for the pipeline without holding its jobs: indexed in one streaming
 * pass (job-index.ts), then checked window by window (the document builder, the schema and the
 * local rules on a few hundred jobs at a time, order numbers compared across the file as below),
 * giving exactly the whole read's diagnostics
 * (loadManifest: codes, messages, fields, sources, order); its Manifest.jobs is a JobView that
 * reads windows again on demand (job-view.ts).
 *
 * The whole read keeps the first MAX_DIAGNOSTICS_PER_CODE findings of each code in file order
 * and sums up the rest; a window reports all of its own, so the check keeps each code's first
 * ones by row (a row's findings are one window's) and counts the rest.
 *
 * Order numbers: the index already made one job of the rows of each order number as written, so
 * two jobs can share one only in NFC (uniqueOrderNumber), and then one of them is not in NFC.
 * The check notes the NFC forms of those (almost always none) and, only if there are any,
 * compares the jobs with those forms in a second pass: no map of every order number.
 */
import type { Diagnostic, JobList, Manifest, SourceMap } from '../model.js';
import { validateDocument } from '../schema/validate.js';
import { sortDiagnostics } from '../diagnostics.js';
import { hasFileLevelError, restatesErrorOf } from '../restated.js';
import { located, runJobRules } from '../rules/index.js';
import { OrderNumbers } from '../rules/job-fields.js';
import type { Finding } from '../rules/rule.js';
import type { CsvLimits } from '../read-input.js';
import { type CsvJobIndex, indexCsvJobs, JobIndexUnsupported, type JobReaderSync, openJobsSync } from './job-index.js';
import { JobView, WINDOW_JOBS } from './job-view.js';
import { csvOriginOf } from './item-rows.js';
import { MAX_DIAGNOSTICS_PER_CODE, moreOfCode } from './document-builder.js';

export interface WindowedRead {
  diagnostics: Diagnostic[];
  manifest: Manifest<JobList>;
  /** Lets the file go (JobView.close). */
  close(): void;
}

/**
 * `file` read through its job index, or undefined where the whole read must do: a UTF-16 file
 * (no index), a file that stops parsing or holds no job (its diagnostics are the whole read's,
 * and it holds nothing to keep).
 */
export async function readWindowed(
  file: string,
  csv: Partial<CsvLimits> | undefined,
  windowJobs = WINDOW_JOBS,
): Promise<WindowedRead | undefined> {
  let index: CsvJobIndex;
  try {
    index = await indexCsvJobs(file, { csv });
  } catch (err) {
    if (err instanceof JobIndexUnsupported) return undefined;
    throw err;
  }
  if (index.jobCount === 0 || index.sha256 === '' || index.header === undefined) return undefined;
  let repair = true;
  const view = new JobView(
    index,
    (jobs, from) => {
      // The whole read's rules repair only where no file-level error stopped them.
      const ignored: Finding[] = [];
      if (repair) for (let i = 0; i < jobs.length; i++) runJobRules(jobs[i], from + i, ignored);
    },
    windowJobs,
  );
  try {
    const checked = checkWindows(index, view, windowJobs);
    repair = !checked.fileLevel;
    const origin = csvOriginOf(index.header.cells, 0, view.itemRows);
    if (index.read !== undefined) origin.read = index.read;
    const manifest: Manifest<JobList> = {
      file,
      format: 'csv',
      sha256: index.sha256,
      jobs: view,
      sources: view.sources,
      csv: origin,
    };
    return { diagnostics: checked.diagnostics, manifest, close: () => view.close() };
  } catch (err) {
    view.close();
    throw err;
  }
}

/** Every window's builder, schema and rules findings, put together as the whole read does. */
function checkWindows(
  index: CsvJobIndex,
  view: JobView,
  windowJobs: number,
): { diagnostics: Diagnostic[]; fileLevel: boolean } {
  const headerCount = index.headerDiagnostics ?? index.diagnostics.length;
  const header = index.diagnostics.slice(0, headerCount);
  const problems = index.diagnostics.slice(headerCount);
  const built = new FirstPerCode(MAX_DIAGNOSTICS_PER_CODE, index.file);
  for (const d of header) built.count(d);
  const schema: Diagnostic[] = [];
  const unique: Finding[] = [];
  const rules: Diagnostic[] = [];
  const decomposed = new Set<string>();
  const reader = openJobsSync(index);
  try {
    for (let from = 0; from < index.jobCount; from += windowJobs) {
      const w = reader.read(from, Math.min(from + windowJobs, index.jobCount));
      for (const d of w.diagnostics) built.add(d);
      const local: SourceMap = { locate: (path) => w.sources.locate(shifted(path, from) as string) };
      local.locateKey = local.locate;
      for (const d of validateDocument({ doc: { version: 1, jobs: w.doc }, sources: local }))
        schema.push({ ...d, field: shifted(d.field, from) });
      const found: Finding[] = [];
      for (let i = 0; i < w.jobs.length; i++) {
        const n = w.jobs[i].orderNumber;
        if (typeof n === 'string' && n.normalize('NFC') !== n) decomposed.add(n.normalize('NFC'));
        runJobRules(w.jobs[i], from + i, found);
      }
      for (const f of found) rules.push(located(f, w.sources));
    }
    if (decomposed.size > 0) sameInNfc(index, reader, windowJobs, decomposed, view.sources, unique);
  } finally {
    reader.close();
  }
  const diagnostics = [...header, ...built.kept(), ...built.summaries(), ...problems, ...schema];
  const fileLevel = hasFileLevelError(diagnostics);
  const restated = restatesErrorOf(diagnostics);
  for (const f of unique) {
    const d = located(f, view.sources);
    if (!restated(d.field)) diagnostics.push(d);
  }
  if (!fileLevel) for (const d of rules) if (!restated(d.field)) diagnostics.push(d);
  return { diagnostics: sortDiagnostics(diagnostics), fileLevel };
}

/** uniqueOrderNumber's findings, among the jobs whose order number is one of `forms` in NFC. */
function sameInNfc(
  index: CsvJobIndex,
  reader: JobReaderSync,
  windowJobs: number,
  forms: ReadonlySet<string>,
  sources: SourceMap,
  into: Finding[],
): void {
  const orderNumbers = new OrderNumbers();
  for (let from = 0; from < index.jobCount; from += windowJobs) {
    const { jobs } = reader.read(from, Math.min(from + windowJobs, index.jobCount));
    for (let i = 0; i < jobs.length; i++) {
      const n = jobs[i].orderNumber;
      if (typeof n === 'string' && forms.has(n.normalize('NFC'))) orderNumbers.add(jobs[i], from + i, sources, into);
    }
  }
}

/** A window's path (`jobs[i]…`, i within the window) as the whole file's (`jobs[from + i]…`). */
function shifted(path: string | undefined, from: number): string | undefined {
  const m = path === undefined ? null : /^jobs\[(\d+)\]/.exec(path);
  return m === null ? path : `jobs[${Number(m[1]) + from}]${(path as string).slice(m[0].length)}`;
}

/**
 * The first `cap` diagnostics of each code in file order (by row: a record's findings come in
 * one window, in its order), the rest counted: what the whole read's builder keeps.
 */
interface Kept {
  d: Diagnostic;
  at: number;
}

interface PerCode {
  /** Findings of the code, the header's among them. */
  n: number;
  /** The header's: they come first and take their part of the cap. */
  header: number;
  kept: Kept[];
  /** The code's first finding in file order (the header's come first of all). */
  first?: Kept;
}

class FirstPerCode {
  private readonly perCode = new Map<string, PerCode>();
  private seq = 0;

  constructor(
    private readonly cap: number,
    private readonly file: string,
  ) {}

  /** A finding of the header's: counted towards its code's cap, kept by the index. */
  count(d: Diagnostic): void {
    const entry = this.of(d.code);
    entry.n++;
    entry.header++;
    entry.first ??= { d, at: -1 };
  }

  add(d: Diagnostic): void {
    const entry = this.of(d.code);
    entry.n++;
    const k = { d, at: this.seq++ };
    entry.kept.push(k);
    if (entry.first === undefined || byRow(k, entry.first) < 0) entry.first = k;
    // Sorted and cut now and then: memory for twice the cap, not for every finding.
    if (entry.kept.length >= 2 * this.cap) entry.kept = this.first(entry);
  }

  /** What the builder keeps, in file order. */
  kept(): Diagnostic[] {
    const all: Kept[] = [];
    for (const entry of this.perCode.values()) for (const k of this.first(entry)) all.push(k);
    return all.sort(byRow).map((k) => k.d);
  }

  /** The "… and N more" lines, in the order the codes first appear in the file. */
  summaries(): Diagnostic[] {
    const out: Diagnostic[] = [];
    const codes = [...this.perCode].sort(([, a], [, b]) => byFirst(a, b));
    for (const [code, { n }] of codes) if (n > this.cap) out.push(moreOfCode(code, n, this.cap, this.file));
    return out;
  }

  private of(code: string): PerCode {
    let entry = this.perCode.get(code);
    if (entry === undefined) {
      entry = { n: 0, header: 0, kept: [] };
      this.perCode.set(code, entry);
    }
    return entry;
  }

  /** The cap's first, in file order; fewer where the header's findings of the code took their place. */
  private first(entry: PerCode): Kept[] {
    return entry.kept.sort(byRow).slice(0, Math.max(0, this.cap - entry.header));
  }
}

/** File order: by row, a row's findings in the order its window gave them (the header's before all). */
function byRow(a: Kept, b: Kept): number {
  if (a.at < 0 || b.at < 0) return a.at - b.at;
  return (a.d.source?.row ?? 0) - (b.d.source?.row ?? 0) || a.at - b.at;
}

function byFirst(a: PerCode, b: PerCode): number {
  return a.first === undefined || b.first === undefined ? 0 : byRow(a.first, b.first);
}
