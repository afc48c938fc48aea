import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient } from '../../api/client.js';
import type { ResultReport } from '../../report/model.js';
import { writeResultJson } from '../../report/write-result-json.js';
import { buildTracking } from './build-tracking.js';
import { fetchStates } from './fetch-states.js';
import type { JobTracking, TrackTarget } from '../../report/tracking-model.js';
import type { ReportFile, Targets } from './targets.js';

export interface TrackOptions {
  includeClosed: boolean;
  details: boolean;
  concurrency: number;
  /** Clock (tests pass a fixed one). */
  now?: () => Date;
}

export interface TrackedJob extends TrackTarget {
  tracking: JobTracking;
  /** What changed since the previous check, for people (`status Scheduled → In Production`); empty when nothing. */
  changes: string[];
  /**
   * Despatched since the previous check: a `dispatched` notification is due. A job first seen
   * despatched counts when its report will remember it (ledger-only jobs only within a --watch).
   */
  dispatched: boolean;
}

export interface TrackResult {
  jobs: TrackedJob[];
  /** Reports rewritten with the new tracking. */
  reportsWritten: string[];
  /** Some jobs could not be read for reasons other than "not found". */
  incomplete: boolean;
  /** The reports of the targets, by path, with the new tracking. */
  reports: ReadonlyMap<string, ResultReport>;
  /** Each report's mode and group: its tracking file gets no more. */
  files: ReadonlyMap<string, ReportFile>;
  /** When the check read the jobs, by the calendar clock (`now`): every tracking's `checkedAt`. */
  checkedAt: string;
}

/**
 * One check: reads every target's state (fetchStates), builds its tracking and writes it into
 * each report atomically (X.result.json is replaced whole; readers never see a torn file).
 * `memory` carries the last tracking across checks of a --watch, for jobs that have no report.
 */
export async function trackOnce(
  client: ApiClient,
  targets: Targets,
  opts: TrackOptions,
  memory: Map<number, JobTracking> = new Map(),
): Promise<TrackResult> {
  const now = (opts.now ?? (() => new Date()))();
  const wanted = new Map<number, JobTracking | undefined>();
  for (const t of targets.targets) {
    if (!wanted.has(t.jobNumber)) wanted.set(t.jobNumber, memory.get(t.jobNumber) ?? t.previous);
  }
  const { observations, incomplete } = await fetchStates(client, wanted, { ...opts, now });
  const checkedAt = now.toISOString();
  const next = new Map<number, JobTracking>();
  for (const [n, previous] of wanted) next.set(n, buildTracking(previous, observations.get(n) ?? {}, checkedAt));

  const jobs: TrackedJob[] = targets.targets.map((t) => {
    // Every target was put in `wanted`, and `next` holds a tracking for each of those.
    const tracking = next.get(t.jobNumber) ?? buildTracking(t.previous, {}, checkedAt);
    const before = wanted.get(t.jobNumber);
    const remembered = before !== undefined || t.reportFile !== undefined;
    const dispatched = remembered && tracking.dateOut !== null && (before?.dateOut ?? null) === null;
    return { ...t, tracking, changes: describeChanges(before, tracking), dispatched };
  });
  for (const [n, tracking] of next) memory.set(n, tracking);

  const reportsWritten: string[] = [];
  for (const [path, report] of targets.reports) {
    let touched = false;
    for (const job of jobs) {
      if (job.reportFile !== path || job.jobIndex === undefined) continue;
      const entry = report.jobs.find((j) => j.index === job.jobIndex);
      if (entry) {
        entry.tracking = job.tracking;
        touched = true;
      }
    }
    if (!touched) continue;
    // Rewritten with the mode and group it had: a private report stays private.
    await writeResultJson(path, report, targets.files.get(path));
    reportsWritten.push(path);
  }
  return { jobs, reportsWritten, incomplete, reports: targets.reports, files: targets.files, checkedAt };
}

/** Pure: the differences a person cares about between two trackings of one job. */
export function describeChanges(before: JobTracking | undefined, after: JobTracking): string[] {
  if (!before) return ['first check'];
  const out: string[] = [];
  const show = (v: unknown): string => (v === null || v === undefined || v === '' ? '-' : String(v));
  if (before.status !== after.status) out.push(`status ${show(before.status)} → ${show(after.status)}`);
  if (before.dateDue !== after.dateDue) out.push(`due ${show(day(before.dateDue))} → ${show(day(after.dateDue))}`);
  if (before.dateOut !== after.dateOut) out.push(`shipped ${show(day(after.dateOut))}`);
  const numbers = (t: JobTracking): string =>
    t.tracking.map((x) => x.trackingNumber ?? x.trackingLink ?? '').join(', ');
  if (numbers(before) !== numbers(after)) out.push(`tracking ${show(numbers(after))}`);
  if ((before.invoiceFile === null) !== (after.invoiceFile === null))
    out.push(after.invoiceFile ? `invoice ${show(after.invoiceNumber)} available` : 'invoice link gone');
  if (before.problem !== after.problem && after.problem) out.push(after.problem);
  return out;
}

export function day(iso: string | null): string | null {
  return iso === null ? null : iso.slice(0, 10);
}

export interface WatchOptions extends TrackOptions {
  intervalMs: number;
  signal?: AbortSignal;
  /** Called after every check; `first` is the initial one (everything is new then). */
  onCheck: (result: TrackResult, first: boolean) => void | Promise<void>;
  /** A check that failed (API unreachable): reported, and the watch goes on. */
  onError?: (err: unknown) => void;
}

/**
 * `--watch`: checks, waits `intervalMs`, checks again, until the signal aborts. The targets
 * are collected afresh every time (new reports, new ledger entries join in).
 */
export async function watchTracking(
  client: ApiClient,
  load: () => Promise<Targets>,
  opts: WatchOptions,
): Promise<void> {
  const memory = new Map<number, JobTracking>();
  for (let first = true; !opts.signal?.aborted; first = false) {
    try {
      const result = await trackOnce(client, await load(), opts, memory);
      await opts.onCheck(result, first);
    } catch (err) {
      if (opts.signal?.aborted) return;
      opts.onError?.(err);
    }
    try {
      await sleep(opts.intervalMs, undefined, { signal: opts.signal });
    } catch {
      return; // aborted
    }
  }
}
