import { opendir, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { InputEvent, WatchEvents } from '../watch/events.js';
import { reportPaths, type ReportPaths } from '../report/report-paths.js';
import { classifyName } from '../watch/sources/drop-names.js';
import type { DropLayout } from '../watch/sources/model.js';
import { openFolder, readHead } from './safe-files.js';
import { estimates, reportView, type JobView, type ReportView } from './report-view.js';
import type { Amounts } from './amounts.js';
import type { InputStatus } from './statuses.js';

/**
 * Every input the dashboard knows: the files of a folder (a drop folder's own files and its
 * processing/, done/ and failed/, or a folder of plain `run`s) with the reports beside them,
 * and, while watching, the watcher's events for inputs not finished yet. Only names found by
 * listing are ever opened: a request names an input by the id given here, never by a path.
 */

export type Place = 'drop' | 'processing' | 'done' | 'failed';

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

/** A folder's files (never through a link, the folder's own name included: openFolder). */
async function listFolder(dir: string): Promise<Listed[]> {
  const folder = await openFolder(dir);
  if (!folder) return [];
  const out: Listed[] = [];
  try {
    const handle = await opendir(folder.at());
    let seen = 0;
    for await (const entry of handle) {
      if (++seen > SCAN_LIMITS.entriesPerFolder) break;
      // Dirent types come from lstat: a link is never a file here, so it is never opened.
      if (!entry.isFile() || entry.name.startsWith('.')) continue;
      const st = await lstat(folder.at(entry.name)).catch(() => undefined);
      const path = join(dir, entry.name);
      if (st?.isFile())
        out.push({ name: entry.name, path, mtimeMs: st.mtimeMs, size: st.size, dev: st.dev, ino: st.ino });
    }
    return (await folder.stillHeld()) ? out : [];
  } catch {
    return [];
  } finally {
    await folder.close();
  }
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

/** Checked, planned or a dry run: its report says nothing was sent to the API as an order. */
function plannedOnly(view: ReportView): boolean {
  const b = view.byStatus;
  return (
    view.errorCount === 0 && b.invalid === 0 && (view.planned || (b.valid > 0 && b.valid + b.skipped === view.jobCount))
  );
}

function statusOf(place: Place, view: ReportView | undefined): InputStatus {
  if (place === 'processing') return 'processing';
  if (view && view.byStatus['in-doubt'] > 0) return 'in doubt';
  if (place === 'failed') return place;
  if (view && plannedOnly(view)) return 'planned';
  if (place === 'done') return place;
  if (!view) return 'waiting';
  const b = view.byStatus;
  return b.failed + b.invalid > 0 || view.errorCount > 0 ? 'failed' : 'done';
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

/** A folder's files as inputs with their reports; each file's identity and time go into `sig`. */
function grouped(place: Place, files: Listed[], sig: string[]): Found[] {
  const groups = new Map<string, Found>();
  for (const f of files) {
    sig.push(`${place}/${f.name}:${f.mtimeMs}:${f.size}`);
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

/** The paths of the newest reports, up to SCAN_LIMITS.cachedReports: those read for the pages. */
function newestReports(found: Found[]): Set<string> {
  const reports = found.flatMap((g) => (g.reports.json ? [g.reports.json] : []));
  reports.sort((a, b) => b.mtimeMs - a.mtimeMs || a.path.localeCompare(b.path));
  return new Set(reports.slice(0, SCAN_LIMITS.cachedReports).map((f) => f.path));
}

type LiveState = Pick<InputEvent, 'phase' | 'at' | 'problem' | 'retryInMs'>;

/**
 * The inputs of one folder, kept up to date: `scan()` lists the folder again (reports are
 * parsed once per version of the file), and `follow(events)` adds what a watcher says about
 * inputs that have no report yet.
 */
export class DropInputs {
  private readonly cache = new Map<string, ParsedReport>();
  private readonly live = new Map<string, LiveState>();
  private readonly durations = new Map<string, number>();
  private records: InputRecord[] = [];
  private signature = '';
  /** The folders as they were when the last scan began, and when that was. */
  private scanned: { stamp: string; newestMs: number; at: number } | undefined;

  constructor(
    readonly root: string,
    private readonly layout: DropLayout | undefined,
  ) {}

  /** Listens to a watcher; returns the unsubscribe. `onChange` is told after each event. */
  follow(events: WatchEvents, onChange: () => void): () => void {
    return events.on((e) => {
      if (e.kind !== 'input') return;
      this.note(e);
      onChange();
    });
  }

  private note(e: InputEvent): void {
    if (e.phase === 'done' || e.phase === 'failed' || e.phase === 'lost') {
      this.live.delete(e.name);
      if (e.durationMs !== undefined) {
        this.durations.set(e.name, e.durationMs);
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
   * The drop folder and its layout folders that are real folders (not a link out of it), with a
   * stamp of their identities and times (it differs when an entry was added, removed or renamed)
   * and the newest of those times.
   */
  private async folders() {
    const places: [Place, string][] = [];
    const stamp: string[] = [];
    let newestMs = 0;
    const look = async (place: Place, dir: string): Promise<void> => {
      const st = await lstat(dir).catch(() => undefined);
      if (st?.isDirectory() !== true) {
        stamp.push(`${place}:-`);
        return;
      }
      places.push([place, dir]);
      stamp.push(`${place}:${st.dev}:${st.ino}:${st.mtimeMs}`);
      newestMs = Math.max(newestMs, st.mtimeMs);
    };
    await look('drop', this.root);
    // The drop folder itself is listed even when it cannot be looked at (it shows as empty).
    if (places.length === 0) places.push(['drop', this.root]);
    if (this.layout) {
      for (const place of ['processing', 'done', 'failed'] as const)
        await look(place, join(this.root, this.layout[place]));
    }
    return { places, stamp: stamp.join('\n'), newestMs };
  }

  /** Lists the folders again; returns whether anything changed since the last scan. */
  async scan(): Promise<boolean> {
    // The folders' stamp is taken before listing: a change while listing shows as a new stamp.
    const at = Date.now();
    const { places, stamp, newestMs } = await this.folders();
    this.scanned = { stamp, newestMs, at };
    const found: Found[] = [];
    const sig: string[] = [];
    for (const [place, dir] of places) found.push(...grouped(place, await listFolder(dir), sig));
    const read = newestReports(found);
    const records: InputRecord[] = [];
    for (const { place, name, input, reports } of found) {
      const json = reports.json;
      const parsed = json && read.has(json.path) ? await this.parse(json) : undefined;
      const first = input ?? json ?? Object.values(reports)[0];
      const r = record(`${place}/${name}`, name, place, first?.mtimeMs ?? 0, parsed);
      const unread = json && !parsed ? `not read: only the newest ${SCAN_LIMITS.cachedReports} reports are` : null;
      records.push({
        ...r,
        durationMs: this.durations.get(name) ?? r.durationMs,
        problem:
          r.problem ??
          unread ??
          (place === 'failed' && !json ? 'set aside without a report (see the watcher’s log)' : null),
        inputPath: input?.path ?? null,
        reports: Object.fromEntries(Object.entries(reports).map(([k, f]) => [k, f.path])),
      });
    }
    // Forget digests of reports that are gone or no longer read.
    for (const key of this.cache.keys()) if (!read.has(key)) this.cache.delete(key);
    this.records = records;
    const signature = sig.sort().join('\n');
    const changed = signature !== this.signature;
    this.signature = signature;
    return changed;
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
    };
    this.cache.set(f.path, parsed);
    return parsed;
  }

  /** Every input, newest first, the watcher's news laid over the folder's. */
  list(): InputRecord[] {
    const out = this.records.map((r) => {
      const l = r.place === 'drop' || r.place === 'processing' ? this.live.get(r.name) : undefined;
      return l ? withLive(r, l) : r;
    });
    const listed = new Set(this.records.filter((r) => r.place !== 'done' && r.place !== 'failed').map((r) => r.name));
    for (const [name, l] of this.live) {
      if (!listed.has(name)) out.push(withLive(record(`live/${name}`, name, 'drop', l.at), l));
    }
    return out.sort((a, b) => b.at - a.at || a.id.localeCompare(b.id));
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
