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
 * A window's schema and rule findings are written out as it is checked (spilled-findings.ts) and
 * read back a window at a time: a file whose every row is faulty holds none of them in memory.
 * Which of them the whole read keeps needs the whole file (a code over its cap makes a file-level
 * error, which drops every rule finding), so each window is put together as the whole read has it
 * only once every window is checked, from what is kept in memory (the header's findings, the
 * builder's first of each code and its summaries, the index's problems, the findings on no job):
 * a rule finding restating an error is one on the same job, or under an error on no job.
 *
 * Order numbers: the index already made one job of the rows of each order number as written, so
 * two jobs can share one only in NFC (uniqueOrderNumber), and then one of them is not in NFC.
 * The check notes the NFC forms of those (almost always none) and, only if there are any,
 * compares the jobs with those forms in a second pass: no map of every order number.
 */
import { jobIndexOf } from '../field-path.js';
import type { Diagnostic, JobList, Manifest, SourceMap } from '../model.js';
import { validateJobs } from '../schema/validate.js';
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
import { SpilledFindings, type WindowFindings } from './spilled-findings.js';

export interface WindowedRead {
  /** The findings on no job (the header's, a file-level error's), in the whole read's order. */
  diagnostics: Diagnostic[];
  /** The findings on the jobs, a window at a time (or all at once: SpilledFindings.all). */
  jobFindings: SpilledFindings;
  manifest: Manifest<JobList>;
  /** Lets the file go (JobView.close), and the findings. */
  close(): void;
}

/**
 * @internal Told of each window's findings as they are made, before they are written out: what
 * a test watches to see that the read holds no window's findings once it is checked.
 */
export const windowProbe: { checked?: (findings: readonly Diagnostic[]) => void } = {};

/**
 * `file` read through its job index, or undefined where the whole read must do: a UTF-16 file
 * (no index), a file that stops parsing or holds no job (its diagnostics are the whole read's,
 * and it holds nothing to keep). Its findings' temporary file is a temporary of `findingsBeside`'s
 * name (the input's by default).
 */
export async function readWindowed(
  file: string,
  csv: Partial<CsvLimits> | undefined,
  windowJobs = WINDOW_JOBS,
  findingsBeside = file,
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
  let findings: SpilledFindings | undefined;
  try {
    findings = await SpilledFindings.create(findingsBeside, index.jobCount, windowJobs);
    const checked = await checkWindows(index, view, windowJobs, findings);
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
    const jobFindings = findings;
    const close = () => {
      view.close();
      jobFindings.close();
    };
    return { diagnostics: checked.diagnostics, jobFindings, manifest, close };
  } catch (err) {
    view.close();
    findings?.close();
    throw err;
  }
}

/**
 * Every window's builder, schema and rules findings, put together as the whole read does: the
 * findings on no job returned, those on the jobs written out to `spill` as each window is checked.
 */
async function checkWindows(
  index: CsvJobIndex,
  view: JobView,
  windowJobs: number,
  spill: SpilledFindings,
): Promise<{ diagnostics: Diagnostic[]; fileLevel: boolean }> {
  const headerCount = index.headerDiagnostics ?? index.diagnostics.length;
  const header = index.diagnostics.slice(0, headerCount);
  const problems = index.diagnostics.slice(headerCount);
  const built = new FirstPerCode(MAX_DIAGNOSTICS_PER_CODE, index.file);
  for (const d of header) built.count(d);
  const unique: Finding[] = [];
  const decomposed = new Set<string>();
  const reader = openJobsSync(index);
  try {
    for (let from = 0; from < index.jobCount; from += windowJobs) {
      const w = reader.read(from, Math.min(from + windowJobs, index.jobCount));
      for (const d of w.diagnostics) built.add(d);
      const schema = validateJobs(w.doc, from, w.sources);
      const found: Finding[] = [];
      for (let i = 0; i < w.jobs.length; i++) {
        const n = w.jobs[i].orderNumber;
        if (typeof n === 'string' && n.normalize('NFC') !== n) decomposed.add(n.normalize('NFC'));
        runJobRules(w.jobs[i], from + i, found);
      }
      const rules = found.map((f) => located(f, w.sources));
      windowProbe.checked?.([...schema, ...rules]);
      await spill.add(from, schema, rules);
    }
    if (decomposed.size > 0) sameInNfc(index, reader, windowJobs, decomposed, view.sources, unique);
  } finally {
    reader.close();
  }
  // Kept in memory: a few of each code, the file's own, and the findings on no job.
  const kept = [...header, ...built.kept(), ...built.summaries(), ...problems];
  const fileLevel = hasFileLevelError(kept) || hasFileLevelError(spill.loose.schema);
  const found = unique.map((f) => located(f, view.sources));
  // The findings of some jobs as the whole read has them, from their schema and rule findings
  // (`schema`, `rules`, in the order made) and those of `kept` and `found` that `on` names.
  const whole = (schema: readonly Diagnostic[], rules: readonly Diagnostic[], on: (d: Diagnostic) => boolean) => {
    const diagnostics = [...kept.filter(on), ...schema];
    // An error on no job restates a finding under it; any other, only one on its own job.
    const restated = restatesErrorOf([...kept, ...spill.loose.schema, ...schema]);
    for (const d of found) if (on(d) && !restated(d.field)) diagnostics.push(d);
    if (!fileLevel) for (const d of rules) if (!restated(d.field)) diagnostics.push(d);
    return sortDiagnostics(diagnostics);
  };
  const onNoJob = (d: Diagnostic) => jobIndexOf(d.field) === undefined;
  const inWindow =
    ({ from, to }: WindowFindings) =>
    (d: Diagnostic) => {
      const j = jobIndexOf(d.field);
      return j !== undefined && j >= from && j < to;
    };
  spill.done(
    (w) => {
      const on = inWindow(w);
      return whole(w.schema.filter(on), w.rules.filter(on), on);
    },
    [...kept, ...found].filter((d) => !onNoJob(d)),
    (schema, rules) => whole(schema, rules, () => true),
  );
  return { diagnostics: whole(spill.loose.schema, spill.loose.rules, onNoJob), fileLevel };
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
