import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { validateDocument, validateJobs } from './schema/validate.js';
import { buildManifest } from './build-manifest.js';
import { sortDiagnostics } from './diagnostics.js';
import { hasFileLevelError, restatesErrorOf } from './restated.js';
import type { Mapping } from './mapping/model.js';
import type { RecognisedMapping } from './mapping/recognise-input.js';
import type { Diagnostic, JobList, Manifest, ManifestFormat, ManifestJob, RawDocument, ReadResult } from './model.js';
import { INPUT_MAPPING_CHOICE, INPUT_UNREADABLE, INPUT_UNSUPPORTED, unreadableInput } from './read-input.js';
import { runLocalRulesUpTo } from './rules/index.js';
import { quote } from '../core/suggest.js';
import { readYamlDocument, type YamlReadOptions } from './yaml/read-yaml.js';

/**
 * The one entry point from a file to a checked Manifest: pick the reader by extension,
 * validate against the schema, merge defaults, run the local rules. Never throws for a
 * problem with the input: everything comes back as diagnostics.
 *
 * `manifest` is present whenever the input has a list of jobs, even an invalid one (so
 * reports can list every job); a job may be used only if no error diagnostic names it and
 * there is no file-level error (see `invalidJobs` in ./diagnostics.ts).
 */

export interface LoadOptions extends YamlReadOptions {
  /** ERP column mapping, applied to CSV and .xlsx inputs. */
  mapping?: Mapping;
  /**
   * false: a CSV or .xlsx input without `mapping` is read as the default template, never as a
   * shop export its header is recognised as (docs/mappings.md#recognised-exports). Default true.
   */
  recognise?: boolean;
  /**
   * The delivery option of a mapped export's orders that leave the method blank (setting
   * defaultDeliveryMethod), unless the mapping has its own constant.
   */
  defaultDeliveryMethod?: string;
}

/** @internal The pipeline's load options (prepareInput; tests set windowedFrom 0 to force it). */
export interface WindowedLoadOptions extends LoadOptions {
  /**
   * A template CSV (no mapping, not a recognised export) of at least this many bytes is read
   * through its job index, its jobs a windowed view (csv/windowed-read.ts) whose file
   * `release()` lets go.
   */
  windowedFrom: number;
  /** Jobs a window holds (job-view.ts's WINDOW_JOBS when absent); tests make them few. */
  windowJobs?: number;
  /**
   * The path whose temporary the read's findings are kept in (spilled-findings.ts): the input's
   * result.json, whose stray temporaries (a process killed) the next report write removes.
   * Beside the input when absent.
   */
  findingsBeside?: string;
  /**
   * `check`'s: a template CSV of windowedFrom bytes or more is read whole first, as any input,
   * and read again windowed only when its findings pass this many (counted as they are made,
   * the schema's a slice of jobs at a time): a valid input pays for no second read, and a faulty
   * one never holds more than this many findings read whole. Absent: such an input is read
   * windowed at once.
   */
  wholeUpToFindings?: number;
}

export interface LoadResult<Jobs extends JobList = ManifestJob[]> extends ReadResult<Jobs> {
  /** What the report needs even when nothing could be parsed. */
  input: { file: string; format?: ManifestFormat; sha256?: string };
  /** The preset a shop export given no mapping was recognised as and read through. */
  recognised?: RecognisedMapping;
  /**
   * A windowed read's: closes the file its jobs are read from (a job read later opens it for
   * that read) and lets its jobFindings go.
   */
  release?: () => void;
}

/**
 * The pipeline's windowedFrom. At 16 MiB (some 20,000 jobs of 5 full rows, 70,000 of 5 short
 * reorder rows) a whole read's jobs take some 15–45 MB of heap, within a run's budget; below it
 * the one pass is cheaper than an index pass, a checking pass and the windows read again as
 * the run goes, for little memory saved. Above it the whole read's jobs grow with the file.
 */
export const WINDOWED_FROM_BYTES = 16 * 1024 * 1024;

/**
 * From how many bytes a template CSV's jobs are read a window at a time, in every command that
 * reads so (`check`, `plan`, `run`, `watch`), and how many jobs a window holds.
 * @internal Tests set `fromBytes` to 0 (and `windowJobs` to a few) to read small files so.
 */
export const windowedRead: { fromBytes: number; windowJobs?: number } = { fromBytes: WINDOWED_FROM_BYTES };

/**
 * The reader of a file, by its extension. Delimited text is one format whatever its extension
 * says (`.csv`, `.tsv`, a marketplace's `.txt` report): its separator and encoding are read from
 * its content (csv/sniff.ts).
 */
export function formatOf(file: string): ManifestFormat | undefined {
  const ext = extname(file).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.json') return 'json';
  if (ext === '.csv' || ext === '.tsv' || ext === '.txt') return 'csv';
  if (ext === '.xlsx') return 'xlsx';
  return undefined;
}

export async function loadManifest(file: string, opts: WindowedLoadOptions): Promise<LoadResult<JobList>>;
export async function loadManifest(file: string, opts?: LoadOptions): Promise<LoadResult>;
export async function loadManifest(
  file: string,
  opts: LoadOptions | WindowedLoadOptions = {},
): Promise<LoadResult<JobList>> {
  const format = formatOf(file);
  if (!format) {
    const diagnostic: Diagnostic = {
      severity: 'error',
      code: INPUT_UNSUPPORTED,
      message:
        `unsupported file type "${extname(file) || '(none)'}"; manifests are .yaml, .yml, .json, ` +
        'delimited text (.csv, .tsv, .txt) or .xlsx',
      source: { file },
    };
    return { input: { file }, diagnostics: [diagnostic] };
  }
  // YAML and JSON are read through one checked open (readInputBytes); the others are looked at first.
  if (format === 'csv' || format === 'xlsx') {
    const unreadable = await unreadableInput(file);
    if (unreadable !== undefined) return { input: { file, format }, diagnostics: [unreadable] };
  }
  let raw: RawDocument | undefined;
  let recognised: RecognisedMapping | undefined;
  let mapping: Mapping | undefined;
  try {
    const chosen = await chooseMapping(file, format, opts);
    if ('refused' in chosen) return { input: { file, format }, diagnostics: [chosen.refused] };
    recognised = chosen.recognised;
    mapping = recognised?.mapping ?? opts.mapping;
    const readAs = { ...opts, mapping: withDefaultMethod(mapping, opts.defaultDeliveryMethod) };
    if (mapping === undefined && format === 'csv' && 'windowedFrom' in opts) {
      const { wholeUpToFindings } = opts;
      if (wholeUpToFindings === undefined) {
        const windowed = await readBig(file, opts);
        if (windowed !== undefined) return windowed;
      } else if ((await stat(file)).size >= opts.windowedFrom) {
        raw = await readRaw(file, format, readAs);
        // A file that stops parsing has no job index: its whole read is all there is.
        const checked = raw.sha256 === '' ? undefined : checkRawDocument(raw, wholeUpToFindings);
        if (checked !== undefined) return checked;
        if (raw.sha256 !== '') {
          raw = undefined; // let go before the windowed read
          const windowed = await readBig(file, { ...opts, windowedFrom: 0 });
          if (windowed !== undefined) return windowed;
        }
      }
    }
    raw ??= await readRaw(file, format, readAs);
    const wrong = await misfit(raw, format, opts);
    if (wrong !== undefined) return { input: { file, format }, diagnostics: [wrong] };
  } catch (err) {
    // Readers report content problems as diagnostics; a throw here is an I/O failure mid-read.
    const diagnostic: Diagnostic = {
      severity: 'error',
      code: INPUT_UNREADABLE,
      message: `cannot be read: ${(err as Error).message}`,
      source: { file },
    };
    return { input: { file, format }, diagnostics: [diagnostic] };
  }
  const checked = checkRawDocument(raw);
  if (mapping !== undefined) readThrough(checked, mapping, raw.csv?.header ?? []);
  return recognised === undefined ? checked : { ...checked, recognised };
}

/** A template CSV of windowedFrom bytes or more, read windowed; undefined: read it whole. */
async function readBig(file: string, opts: WindowedLoadOptions): Promise<LoadResult<JobList> | undefined> {
  if ((await stat(file)).size < opts.windowedFrom) return undefined;
  const { readWindowed } = await import('./csv/windowed-read.js');
  const read = await readWindowed(file, opts.csv, opts.windowJobs, opts.findingsBeside);
  if (read === undefined) return undefined;
  const { manifest, diagnostics, jobFindings } = read;
  return {
    input: { file, format: 'csv', sha256: manifest.sha256 },
    manifest,
    diagnostics,
    jobFindings,
    release: read.close,
  };
}

/**
 * What a mapped export's messages say in the mapping's terms: the preset it was read through (on
 * the manifest, for the resolve layer's hints), and a missing delivery method as the setting
 * that gives one (an Etsy export has no method column; a shop order may leave it blank), not as
 * the YAML manifest's `defaults.deliveryAddress`.
 */
function readThrough(checked: LoadResult, mapping: Mapping, header: readonly string[]): void {
  if (checked.manifest !== undefined && mapping.preset !== undefined) checked.manifest.preset = mapping.preset;
  const by = mapping.preset === undefined ? 'the mapping' : `the ${mapping.preset} preset`;
  const setting =
    'set defaultDeliveryMethod in the config file (or HTORDER_DEFAULT_DELIVERY_METHOD) to the option such ' +
    'orders ship by (docs/configuration.md#delivery-methods)';
  for (const d of checked.diagnostics) {
    if (d.code !== 'delivery-method.missing') continue;
    const column = d.source?.columnName;
    d.message =
      column !== undefined && header.includes(column)
        ? `no delivery method: the order's ${quote(column)} is blank; ${setting}`
        : `no delivery method: the export has no shipping-method column (${by} reads none); ${setting}`;
  }
}

/** `mapping` with the configured default delivery method, unless the mapping sets its own. */
function withDefaultMethod(mapping: Mapping | undefined, method: string | undefined): Mapping | undefined {
  if (mapping === undefined || method === undefined || method.trim() === '') return mapping;
  if (mapping.constants?.deliveryMethod !== undefined) return mapping;
  return { ...mapping, constants: { ...mapping.constants, deliveryMethod: method } };
}

/** An input-level error of the mapping choice (`check`, `plan`, `run`: exit code 2; watch: failed/). */
function choiceError(file: string, message: string): Diagnostic {
  return { severity: 'error', code: INPUT_MAPPING_CHOICE, message, source: { file } };
}

/**
 * The mapping a CSV or .xlsx input is read through: the one given, else the preset its header
 * alone fits, else none (the default template); or the refusal to guess between presets.
 */
async function chooseMapping(
  file: string,
  format: ManifestFormat,
  opts: LoadOptions,
): Promise<{ recognised?: RecognisedMapping } | { refused: Diagnostic }> {
  if (opts.mapping !== undefined || opts.recognise === false || (format !== 'csv' && format !== 'xlsx')) return {};
  const { recogniseInput } = await import('./mapping/recognise-input.js');
  const r = await recogniseInput(file, format, opts.csv);
  if (r.kind === 'refused') return { refused: choiceError(file, r.message) };
  return r.kind === 'match' ? { recognised: r.recognised } : {};
}

/**
 * A given mapping that names columns the header lacks, where the header is another preset's
 * export: one error naming that export instead of one per missing column and row.
 */
async function misfit(raw: RawDocument, format: ManifestFormat, opts: LoadOptions): Promise<Diagnostic | undefined> {
  const unknown = raw.diagnostics.filter((d) => d.code === 'mapping.unknown-column');
  if (opts.mapping === undefined || unknown.length === 0) return undefined;
  const { wrongMapping } = await import('./mapping/recognise-input.js');
  // Only the preset's own columns missing (each reported at the input's header): one line for them all.
  const presetOnly = unknown.every((d) => d.source?.file === raw.file);
  const message = await wrongMapping(raw.file, format, opts.mapping, opts.csv, presetOnly);
  return message === undefined ? undefined : choiceError(raw.file, message);
}

/**
 * Validation, manifest building and local rules for an already-read document (any format).
 * With `most`: undefined as soon as its findings are more than that many.
 */
export function checkRawDocument(raw: RawDocument): LoadResult;
export function checkRawDocument(raw: RawDocument, most: number): LoadResult | undefined;
export function checkRawDocument(raw: RawDocument, most = Number.POSITIVE_INFINITY): LoadResult | undefined {
  const input = { file: raw.file, format: raw.format, sha256: raw.sha256 || undefined };
  // An export whose every row a mapping skipped (every order cancelled) has no jobs, and says so
  // in its skipped rows: not an empty manifest.
  const allSkipped = (raw.skipped?.length ?? 0) > 0;
  const found = schemaFindings(raw, most - raw.diagnostics.length);
  if (found === undefined) return undefined;
  const schema = found.filter((d) => !(allSkipped && d.code === 'schema.empty' && d.field === 'jobs'));
  const diagnostics = [...raw.diagnostics, ...schema];
  const manifest: Manifest | undefined = buildManifest(raw);
  if (manifest) {
    // A file-level error (syntax, version, a bad default) taints every merged job: only the
    // manifest-wide rules can still say something true. Otherwise every rule runs, and a
    // finding is dropped where the schema already faulted the same value or item.
    const skip = hasFileLevelError(diagnostics) ? new Set(manifest.jobs.map((_, j) => j)) : new Set<number>();
    const restated = restatesErrorOf(diagnostics);
    const rules = runLocalRulesUpTo(manifest, skip, most - diagnostics.length);
    if (rules === undefined) return undefined;
    // A loop, not push(...findings): spreading a file's worth of findings as arguments overflows the stack.
    for (const d of rules) if (!restated(d.field)) diagnostics.push(d);
  }
  return { input, manifest, diagnostics: sortDiagnostics(diagnostics) };
}

/** Jobs the schema is checked on at a time when findings are counted (checkRawDocument's `most`). */
const SCHEMA_SLICE_JOBS = 256;

/**
 * validateDocument's findings on `raw`, or undefined as soon as they are more than `most`. A
 * template document (`{ version: 1, jobs }`) is checked a slice of jobs at a time, so a file
 * whose every row is faulty never holds the schema's findings on all of them.
 */
function schemaFindings(raw: RawDocument, most: number): Diagnostic[] | undefined {
  if (most < 0) return undefined;
  const doc = raw.doc as { version?: unknown; jobs?: unknown } | undefined;
  const jobs = doc?.jobs;
  const sliced =
    Number.isFinite(most) &&
    doc?.version === 1 &&
    Array.isArray(jobs) &&
    jobs.length > 0 &&
    Object.keys(doc).length === 2;
  if (!sliced) {
    const all = validateDocument(raw);
    return all.length > most ? undefined : all;
  }
  const found: Diagnostic[] = [];
  for (let from = 0; from < jobs.length; from += SCHEMA_SLICE_JOBS) {
    for (const d of validateJobs(jobs.slice(from, from + SCHEMA_SLICE_JOBS), from, raw.sources)) found.push(d);
    if (found.length > most) return undefined;
  }
  return found;
}

/** The other formats' readers are loaded on demand: a YAML-only run never loads their machinery. */
async function readRaw(file: string, format: ManifestFormat, opts: LoadOptions): Promise<RawDocument> {
  switch (format) {
    case 'yaml':
      return readYamlDocument(file, undefined, opts);
    case 'json': {
      const { readJsonDocument } = await import('./json/read-json.js');
      return readJsonDocument(file, undefined, opts);
    }
    case 'csv': {
      const { readCsvDocument } = await import('./csv/read-csv.js');
      return readCsvDocument(file, { mapping: opts.mapping, csv: opts.csv });
    }
    case 'xlsx': {
      const { readXlsxDocument } = await import('./xlsx/read-xlsx.js');
      return readXlsxDocument(file, { mapping: opts.mapping, csv: opts.csv });
    }
  }
}
