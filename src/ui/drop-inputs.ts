import { opendir, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { InputEvent, WatchEvents } from '../watch/events.js';
import { reportPaths, type ReportPaths } from '../report/report-paths.js';
import { classifyName } from '../watch/sources/drop-names.js';
import { DEFAULT_LAYOUT, type DropLayout } from '../watch/sources/model.js';
import { openFolder, readHead } from './safe-files.js';
import {
  awaitingApproval,
  estimates,
  reportView,
  type AwaitingView,
  type JobView,
  type ReportView,
} from './report-view.js';
import type { Amounts } from './amounts.js';
import type { InputStatus } from './statuses.js';

/**
 * Every input the dashboard knows: the files of a folder (a drop folder's own files and its
 * processing/, done/, failed/ and held/, or a folder of plain `run`s) with the reports beside them,
 * and, while watching, the watcher's events for inputs not finished yet. Only names found by
 * listing are ever opened: a request names an input by the id given here, never by a path.
 */

export type Place = 'drop' | 'processing' | 'done' | 'failed' | 'held';

export type ReportKind = keyof ReportPaths;
/** The reports' names after their input's (`.result.json` …): the names the pipeline writes. */
export const REPORT_SUFFIX: Record<ReportKind, string> = reportPaths('');

/** One input as the pages show it (record() builds it). */
export type InputRecord = ReturnType<typeof record>;

export const SCAN_LIMITS = {
  /** Entries read from one folder; a folder with more shows the first ones only. */
  entriesPerFolder: 20_000,
  /** A larger report is not parsed (it can still be downloaded). */
  reportBytes: 16 * 1024 * 1024,
  /** Jobs kept per report for the list, the day's picture and the orders page. */
  digestJobs: 5_000,
  /**
   * A folder with more files than this that changed is listed by name, the files it had keep
   * their last stat (listFolder's `known`); a smaller one has each file looked at again.
   */
  quickListing: 2_000,
  /**
   * Reports read for the pages: the newest ones, whose digests are kept between scans. Older
   * reports are listed without their figures, so a done/ of many thousand reports costs a page
   * view no parsing once they are read.
   */
  cachedReports: 5_000,
};

interface Listed {
  name: string;
  path: string;
  mtimeMs: number;
  size: number;
  /** Which file it is: a report replaced by another of the same size and time is read again. */
  dev: number;
  ino: number;
}

/**
 * A folder's files (never through a link, the folder's own name included: openFolder). `known`:
 * the files of its last listing, reused for the names still there instead of a stat each — a
 * file renamed over under a known name keeps its old size and time until a listing without
 * `known`.
 */
async function listFolder(dir: string, known?: ReadonlyMap<string, Listed>): Promise<Listed[]> {
  const folder = await openFolder(dir);
  if (!folder) return [];
  try {
    const out: Listed[] = [];
    const unknown: string[] = [];
    let seen = 0;
    for await (const entry of await opendir(folder.at())) {
      if (++seen > SCAN_LIMITS.entriesPerFolder) break;
      // Dirent types come from lstat: a link is never a file here, so it is never opened.
      if (!entry.isFile() || entry.name.startsWith('.')) continue;
      const had = known?.get(entry.name);
      if (had) out.push(had);
      else unknown.push(entry.name);
    }
    for (const name of unknown) {
      const st = await lstat(folder.at(name)).catch(() => undefined);
      if (st?.isFile())
        out.push({ name, path: join(dir, name), mtimeMs: st.mtimeMs, size: st.size, dev: st.dev, ino: st.ino });
    }
    return (await folder.stillHeld()) ? out : [];
  } catch {
    return [];
  } finally {
    await folder.close();
  }
}

/** The same file: its identity, size and time (a stat taken again gives a new object). */
const sameFile = (a: Listed | undefined, b: Listed | undefined): boolean =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.mtimeMs === b.mtimeMs &&
    a.size === b.size &&
    a.ino === b.ino &&
    a.dev === b.dev);

/** Whether two listings of a folder hold the same files with the same sizes and times. */
function sameFiles(a: readonly Listed[], b: readonly Listed[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  const byName = new Map(b.map((f) => [f.name, f]));
  return a.every((f) => sameFile(f, byName.get(f.name)));
}

/**
 * A folder's time can only be trusted to have moved with a change once the clock has moved on:
 * two changes within its granularity (a tick of the kernel's coarse clock, a second or two on
 * some network or FAT file systems) leave it the same. A folder changed this recently is
 * listed again on each look until its time is older than this.
 */
const RACY_MS = 2_000;

interface ParsedReport {
  key: string;
  /** The report's view without its jobs (kept small); the jobs are in `digest`. */
  view?: ReportView;
  problem?: string;
  digest: JobView[];
  estimated: Amounts | null;
  awaiting: AwaitingView | null;
}

let reading: Promise<unknown> = Promise.resolve();

/**
 * Reads and parses a report found by listing, bounded; a broken one is a problem, not a throw.
 * One report at a time: many requests at once for large reports hold one file's bytes and parse
 * in memory, not one per request.
 */
export function readReport(path: string): Promise<{ view?: ReportView; problem?: string }> {
  const read = reading.then(() => readReportNow(path));
  reading = read.catch(() => undefined);
  return read;
}

async function readReportNow(path: string): Promise<{ view?: ReportView; problem?: string }> {
  const head = await readHead(path, SCAN_LIMITS.reportBytes);
  if (!head) return { problem: 'the report could not be opened (not a regular file)' };
  if (!head.whole)
    return { problem: `the report is larger than ${SCAN_LIMITS.reportBytes / 1024 / 1024} MiB: download it instead` };
  try {
    return { view: reportView(JSON.parse(head.bytes.toString('utf8'))) };
  } catch (err) {
    return { problem: `the report is not valid JSON (${(err as Error).message.slice(0, 200)})` };
  }
}

/** Nothing failed, but jobs wait for approval: their reasons are the report's only errors. */
function onlyWaits(view: ReportView): boolean {
  const b = view.byStatus;
  return b['awaiting-approval'] > 0 && b.failed + b.invalid === 0;
}

/** Checked, planned or a dry run: its report says nothing was sent to the API as an order. */
function plannedOnly(view: ReportView): boolean {
  const b = view.byStatus;
  return (
    (view.errorCount === 0 || onlyWaits(view)) &&
    b.invalid === 0 &&
    (view.planned || (b.valid > 0 && b.valid + b.skipped === view.jobCount))
  );
}

function statusOf(place: Place, view: ReportView | undefined): InputStatus {
  if (place === 'processing') return 'processing';
  if (view && view.byStatus['in-doubt'] > 0) return 'in doubt';
  if (place === 'failed' || place === 'held') return place;
  if (view && plannedOnly(view)) return 'planned';
  if (place === 'done') return place;
  if (!view) return 'waiting';
  const b = view.byStatus;
  if (b.failed + b.invalid > 0) return 'failed';
  // A `run` whose jobs wait for approval (exit 4): held where it lies, not failed.
  if (onlyWaits(view)) return 'held';
  return view.errorCount > 0 ? 'failed' : 'done';
}

function reportOf(name: string): { base: string; kind: ReportKind } | undefined {
  for (const kind of Object.keys(REPORT_SUFFIX) as ReportKind[]) {
    const suffix = REPORT_SUFFIX[kind];
    if (name.endsWith(suffix) && name.length > suffix.length) return { base: name.slice(0, -suffix.length), kind };
  }
  return undefined;
}

/** An input (or reports without one) of one folder: its files by kind. */
interface Found {
  place: Place;
  name: string;
  input?: Listed;
  reports: Partial<Record<ReportKind, Listed>>;
}

/** A folder's files as inputs with their reports. */
function grouped(place: Place, files: readonly Listed[]): Found[] {
  const groups = new Map<string, Found>();
  for (const f of files) {
    const report = reportOf(f.name);
    const name = report?.base ?? (classifyName(f.name).take ? f.name : undefined);
    if (name === undefined) continue;
    const g = groups.get(name) ?? { place, name, reports: {} };
    if (report) g.reports[report.kind] = f;
    else g.input = f;
    groups.set(name, g);
  }
  // Reports without an input beside them are listed only in done/ and failed/ (a drop's own
  // reports stay with their input), and an input's name must itself look like one.
  return [...groups.values()].filter((g) => g.input || place === 'done' || place === 'failed');
}

/** Code-unit order: a tie-break that is the same everywhere and costs no collation. */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The list's order: newest first, then by id. */
const newestFirst = (a: { at: number; id: string }, b: { at: number; id: string }): number =>
  b.at - a.at || byText(a.id, b.id);

/** The paths of the newest reports, up to SCAN_LIMITS.cachedReports: those read for the pages. */
function newestReports(found: readonly Found[]): Set<string> {
  const reports = found.flatMap((g) => (g.reports.json ? [g.reports.json] : []));
  reports.sort((a, b) => b.mtimeMs - a.mtimeMs || byText(a.path, b.path));
  return new Set(reports.slice(0, SCAN_LIMITS.cachedReports).map((f) => f.path));
}

type LiveState = Pick<InputEvent, 'phase' | 'at' | 'problem' | 'retryInMs'>;

/** A folder as the last scan listed it: kept while its stamp stays the same. */
interface FolderListing {
  /** The folder's device and inode. */
  id: string;
  stamp: string;
  files: readonly Listed[];
}

/**
 * The inputs of one folder, kept up to date: `scan()` lists the folder again (reports are
 * parsed once per version of the file), and `follow(events)` adds what a watcher says about
 * inputs that have no report yet.
 */
export class DropInputs {
  private readonly cache = new Map<string, ParsedReport>();
  private readonly live = new Map<string, LiveState>();
  private readonly durations = new Map<string, number>();
  /** Durations the watcher told, and how many of them the records show. */
  private durationsTold = 0;
  private durationsShown = 0;
  private records: InputRecord[] = [];
  /** list()'s answer until the next scan or event. */
  private sorted: InputRecord[] | undefined;
  /** The folders as they were when the last scan began, and when that was. */
  private scanned: { stamp: string; newestMs: number; at: number } | undefined;
  /** Each folder as last listed, by place. */
  private listings = new Map<Place, FolderListing>();

  constructor(
    readonly root: string,
    private readonly layout: DropLayout | undefined,
  ) {}

  /** Listens to a watcher; returns the unsubscribe. `onChange` is told after each event. */
  follow(events: WatchEvents, onChange: () => void): () => void {
    return events.on((e) => {
      if (e.kind !== 'input') return;
      this.note(e);
      this.sorted = undefined;
      onChange();
    });
  }

  private note(e: InputEvent): void {
    // Finished: the folder (done/, failed/, held/) and the reports say the rest.
    if (e.phase === 'done' || e.phase === 'failed' || e.phase === 'held' || e.phase === 'lost') {
      this.live.delete(e.name);
      if (e.durationMs !== undefined) {
        this.durations.set(e.name, e.durationMs);
        this.durationsTold += 1;
        // Bounded: the oldest durations go first.
        if (this.durations.size > 10_000) this.durations.delete(this.durations.keys().next().value as string);
      }
      return;
    }
    this.live.set(e.name, { phase: e.phase, at: e.at, problem: e.problem, retryInMs: e.retryInMs });
  }

  /**
   * The folders' own times (a few stats), without listing them: whether an input or a report
   * may have arrived, moved or been replaced since the last scan. A report rewritten in place
   * (not renamed over) leaves them alone: the caller lists again now and then anyway.
   */
  async foldersChanged(): Promise<boolean> {
    const last = this.scanned;
    if (last === undefined || last.newestMs > last.at - RACY_MS) return true;
    return (await this.folders()).stamp !== last.stamp;
  }

  /**
   * The drop folder and its layout folders that are real folders (not a link out of it), each
   * with a stamp of its identity and time (it differs when an entry was added, removed or
   * renamed), the stamp of them all, and the newest of their times.
   */
  private async folders() {
    const places: { place: Place; dir: string; id: string; stamp: string; mtimeMs: number }[] = [];
    const stamp: string[] = [];
    let newestMs = 0;
    const look = async (place: Place, dir: string): Promise<void> => {
      const st = await lstat(dir).catch(() => undefined);
      if (st?.isDirectory() !== true) {
        stamp.push(`${place}:-`);
        return;
      }
      const id = `${st.dev}:${st.ino}`;
      const own = `${place}:${id}:${st.mtimeMs}`;
      places.push({ place, dir, id, stamp: own, mtimeMs: st.mtimeMs });
      stamp.push(own);
      newestMs = Math.max(newestMs, st.mtimeMs);
    };
    await look('drop', this.root);
    // The drop folder itself is listed even when it cannot be looked at (it shows as empty).
    if (places.length === 0)
      places.push({ place: 'drop', dir: this.root, id: '?', stamp: 'drop:?', mtimeMs: Date.now() });
    if (this.layout) {
      const names = { ...DEFAULT_LAYOUT, ...this.layout };
      for (const place of ['processing', 'done', 'failed', 'held'] as const)
        await look(place, join(this.root, names[place]));
    }
    return { places, stamp: stamp.join('\n'), newestMs };
  }

  /**
   * Lists the folders again; returns whether anything changed since the last scan. `full`
   * false: a folder whose stamp is what it was at its last listing, and whose time is old
   * enough to trust (RACY_MS), keeps that listing; in a large folder that changed
   * (SCAN_LIMITS.quickListing), the files keep their last stat while their names are still
   * there (listFolder's `known`). A file rewritten in place, or replaced under a name a large
   * folder had, is seen at the next full scan. When no listing changed, neither do the records.
   */
  async scan(full = true): Promise<boolean> {
    // The folders' stamp is taken before listing: a change while listing shows as a new stamp.
    const at = Date.now();
    const { places, stamp, newestMs } = await this.folders();
    this.scanned = { stamp, newestMs, at };
    const listings = new Map<Place, FolderListing>();
    let changed = places.length !== this.listings.size;
    let kept = !changed && this.durationsShown === this.durationsTold;
    for (const { place, dir, id, stamp: own, mtimeMs } of places) {
      const last = this.listings.get(place);
      // Stats are reused only from the same folder (another one renamed to its name is listed afresh).
      const files =
        full || !last || last.id !== id || last.files.length <= SCAN_LIMITS.quickListing
          ? await listFolder(dir)
          : last.stamp === own && mtimeMs <= at - RACY_MS
            ? last.files
            : await listFolder(dir, new Map(last.files.map((f) => [f.name, f])));
      changed ||= !last || !sameFiles(files, last.files);
      kept &&= files === last?.files;
      listings.set(place, { id, stamp: own, files });
    }
    this.listings = listings;
    if (kept) return false;
    this.durationsShown = this.durationsTold;
    await this.recordsOf([...listings].flatMap(([place, l]) => grouped(place, l.files)));
    return changed;
  }

  /** The records of the inputs found, newest first. */
  private async recordsOf(found: readonly Found[]): Promise<void> {
    const read = newestReports(found);
    const records: InputRecord[] = [];
    for (const group of found) {
      const json = group.reports.json;
      records.push(await this.recordOf(group, json !== undefined && read.has(json.path)));
    }
    // Forget digests of reports that are gone or no longer read.
    for (const key of this.cache.keys()) if (!read.has(key)) this.cache.delete(key);
    this.records = records.sort(newestFirst);
    this.sorted = undefined;
  }

  /** An input's record from its files; `read`: its report is among those read. */
  private async recordOf({ place, name, input, reports }: Found, read: boolean): Promise<InputRecord> {
    const json = reports.json;
    const parsed = json && read ? await this.parse(json) : undefined;
    const first = input ?? json ?? Object.values(reports)[0];
    const r = record(`${place}/${name}`, name, place, first?.mtimeMs ?? 0, parsed);
    const unread = json && !parsed ? `not read: only the newest ${SCAN_LIMITS.cachedReports} reports are` : null;
    return {
      ...r,
      durationMs: this.durations.get(name) ?? r.durationMs,
      problem:
        r.problem ??
        unread ??
        (place === 'failed' && !json ? 'set aside without a report (see the watcher’s log)' : null),
      inputPath: input?.path ?? null,
      reports: Object.fromEntries(Object.entries(reports).map(([k, f]) => [k, f.path])),
    };
  }

  private async parse(f: Listed): Promise<ParsedReport> {
    const key = `${f.dev}:${f.ino}:${f.mtimeMs}:${f.size}`;
    const hit = this.cache.get(f.path);
    if (hit?.key === key) return hit;
    const { view, problem } = await readReport(f.path);
    const parsed: ParsedReport = {
      key,
      view: view && { ...view, jobs: [] },
      problem,
      // Only what the list, the day's picture and the orders page show: the problems and lines stay in the file.
      digest: (view?.jobs ?? [])
        .slice(0, SCAN_LIMITS.digestJobs)
        .map((j) => ({ ...j, warnings: [], errors: [], lines: [] })),
      estimated: view ? estimates(view) : null,
      awaiting: view ? awaitingApproval(view) : null,
    };
    this.cache.set(f.path, parsed);
    return parsed;
  }

  /** Every input, newest first, the watcher's news laid over the folder's. The same array until something changed. */
  list(): readonly InputRecord[] {
    this.sorted ??= this.overlaid();
    return this.sorted;
  }

  private overlaid(): InputRecord[] {
    if (this.live.size === 0) return this.records;
    const out = this.records.map((r) => {
      const l = r.place === 'drop' || r.place === 'processing' ? this.live.get(r.name) : undefined;
      return l ? withLive(r, l) : r;
    });
    const listed = new Set(
      this.records.filter((r) => r.place === 'drop' || r.place === 'processing').map((r) => r.name),
    );
    for (const [name, l] of this.live) {
      if (!listed.has(name)) out.push(withLive(record(`live/${name}`, name, 'drop', l.at), l));
    }
    return out.sort(newestFirst);
  }

  /** The input a request names, when it is one of those listed. */
  find(id: string): InputRecord | undefined {
    return this.list().find((r) => r.id === id);
  }
}

/** An input as its report (if any) tells it; `at`: when, for an input without a report. */
function record(id: string, name: string, place: Place, at: number, parsed?: ParsedReport) {
  const view = parsed?.view;
  return {
    /** `place/name`: how a request names it. */
    id,
    name,
    place,
    status: statusOf(place, view),
    /** When it started (the report's start, the event, else the file's time), ms. */
    at: view?.startedAt ?? at,
    durationMs: view?.startedAt != null && view.finishedAt != null ? view.finishedAt - view.startedAt : null,
    jobs: view?.jobCount ?? null,
    lines: view?.lineCount ?? null,
    errors: view?.errorCount ?? null,
    warnings: view?.warningCount ?? null,
    byStatus: view?.byStatus ?? null,
    /** The estimates of its jobs, per currency. What it spent is counted across inputs (submissions.ts). */
    estimated: parsed?.estimated ?? null,
    /** Its jobs that wait for approval: how many, their estimate and why; null when none waits. */
    awaiting: parsed?.awaiting ?? null,
    problem: parsed?.problem ?? null,
    /** Absolute paths of the files found by listing. */
    inputPath: null as string | null,
    reports: {} as Partial<Record<ReportKind, string>>,
    digest: parsed?.digest ?? [],
  };
}

function withLive(r: InputRecord, l: LiveState): InputRecord {
  const status: InputStatus = l.phase === 'processing' || l.phase === 'retry' ? 'processing' : 'waiting';
  const problem =
    l.phase === 'retry'
      ? `waiting to retry${l.retryInMs === undefined ? '' : ` in ${Math.ceil(l.retryInMs / 1000)} s`}: ${l.problem ?? 'the API was unavailable'}`
      : l.phase === 'requeued'
        ? `changed while processed; taken again once it settles${l.problem ? `: ${l.problem}` : ''}`
        : r.problem;
  return { ...r, status, at: Math.max(r.at, l.at), problem };
}
