import type { NotifyEventName } from '../../core/config/notify-config.js';
import { scrubServerText } from '../../core/log/redact.js';
import type { InputEvent } from '../events.js';
import { JOB_STATUSES, type JobStatus, type ReportSummary } from '../../report/model.js';
import { printable } from '../../core/printable.js';

/**
 * What one notification says, before any webhook's format (payloads.ts) renders it. Pure
 * data: the JSON format sends it as it is. Fields marked "from outside" hold text an input's
 * author, a drop location or the API chose; every format neutralises them for its markup.
 */
export interface Notification {
  /** Schema of this object, for programs that receive the JSON format. */
  schema: 'htorder.notification/1';
  event: NotifyEventName | 'digest';
  severity: 'error' | 'warning' | 'ok' | 'info';
  /** Our own words, one line, no text from outside: "Input failed", "API unavailable for 12 min". */
  title: string;
  /** When it happened (ISO 8601). */
  at: string;
  /** Who tells: `htorder watch on HOST`. */
  origin: string;
  /** From outside: the input's name and where it is now (a path or `s3://bucket/key`, never signed). */
  input?: { name: string; location: string };
  /** From outside: why, in one line (secrets scrubbed, URLs cut at their query). */
  problem?: string;
  /** The input's jobs by status, statuses with none left out. */
  jobs?: Partial<Record<JobStatus, number>>;
  durationMs?: number;
  /** api-unavailable / api-recovered: since when, and for how long so far. */
  outage?: { since: string; forMs: number };
  digest?: DigestCounts & { from: string; to: string };
  /** dispatched (`htorder track`): the job's tracking, keyed by the shop's own order number; from outside. */
  dispatch?: DispatchFacts & { skus: string[] };
}

/** What a shop needs to mark its order shipped. */
interface DispatchFacts {
  shopOrderNumber: string;
  orderNumber: string;
  jobNumber: number;
  carrier: string;
  trackingNumber: string;
  trackingLink: string;
  despatchDate: string;
}

/** What a daily digest counts, from the events of the day. */
export interface DigestCounts {
  inputsDone: number;
  inputsFailed: number;
  /** Inputs that had jobs in doubt at least once. */
  inputsInDoubt: number;
  jobs: Partial<Record<JobStatus, number>>;
  apiOutages: number;
}

/** Longest text from outside kept in a notification: chat messages are for people, reports hold the rest. */
const MAX_OUTSIDE_TEXT = 1000;

/** Text from outside, made safe to show: one line, no control characters, no secret, bounded. */
export function outsideText(text: string, max = MAX_OUTSIDE_TEXT): string {
  const clean = printable(scrubServerText(text));
  return clean.length <= max ? clean : `${clean.slice(0, max - 1)}…`;
}

export function inDoubtCount(summary: ReportSummary | undefined): number {
  return summary?.byStatus['in-doubt'] ?? 0;
}

/** A notification about one input: it failed, it was done, or some of its jobs are in doubt. */
export function inputNotification(
  kind: 'failed' | 'done' | 'in-doubt' | 'awaiting-approval',
  event: InputEvent,
  origin: string,
): Notification {
  const doubt = inDoubtCount(event.summary);
  const waiting = event.summary?.byStatus['awaiting-approval'] ?? 0;
  const title =
    kind === 'awaiting-approval'
      ? `${waiting} ${waiting === 1 ? 'job' : 'jobs'} awaiting approval`
      : kind === 'failed'
        ? 'Input failed'
        : kind === 'done'
          ? 'Input done'
          : `${doubt} ${doubt === 1 ? 'job' : 'jobs'} in doubt`;
  const problem =
    kind === 'in-doubt'
      ? 'created or not is unknown until the API answers a search; htorder settles them before sending anything again'
      : event.problem;
  return {
    schema: 'htorder.notification/1',
    event: kind,
    severity: kind === 'failed' ? 'error' : kind === 'done' ? 'ok' : 'warning',
    title,
    at: new Date(event.at).toISOString(),
    origin,
    input: { name: outsideText(event.name, 300), location: outsideText(event.location, 500) },
    ...(problem === undefined ? {} : { problem: outsideText(problem) }),
    ...(event.summary ? { jobs: nonZero(event.summary.byStatus) } : {}),
    ...(event.durationMs === undefined ? {} : { durationMs: event.durationMs }),
  };
}

/** The API has been unavailable since `since` (still is, at `now`), or is available again. */
export function apiNotification(
  kind: 'api-unavailable' | 'api-recovered',
  since: number,
  now: number,
  origin: string,
  problem?: string,
): Notification {
  const forMs = Math.max(0, now - since);
  return {
    schema: 'htorder.notification/1',
    event: kind,
    severity: kind === 'api-unavailable' ? 'error' : 'ok',
    title:
      kind === 'api-recovered'
        ? `API available again after ${duration(forMs)}`
        : `API unavailable${forMs === 0 ? '' : ` for ${duration(forMs)}`}`,
    at: new Date(now).toISOString(),
    origin,
    ...(problem === undefined ? {} : { problem: outsideText(problem) }),
    outage: { since: new Date(since).toISOString(), forMs },
  };
}

/** A job despatched, as `htorder track` saw it: what a shop needs to mark its order shipped. */
export function dispatchNotification(
  d: DispatchFacts & { lines: ReadonlyArray<{ sku: string }> },
  origin: string,
  at = Date.now(),
): Notification {
  return {
    schema: 'htorder.notification/1',
    event: 'dispatched',
    severity: 'info',
    title: 'Order dispatched',
    at: new Date(at).toISOString(),
    origin,
    dispatch: {
      shopOrderNumber: outsideText(d.shopOrderNumber, 200),
      orderNumber: outsideText(d.orderNumber, 200),
      jobNumber: d.jobNumber,
      carrier: outsideText(d.carrier, 200),
      trackingNumber: outsideText(d.trackingNumber, 200),
      trackingLink: outsideText(d.trackingLink, 500),
      despatchDate: outsideText(d.despatchDate, 40),
      skus: d.lines.slice(0, 100).map((l) => outsideText(l.sku, 200)),
    },
  };
}

export function digestNotification(counts: DigestCounts, from: number, to: number, origin: string): Notification {
  const trouble = counts.inputsFailed + counts.inputsInDoubt + counts.apiOutages > 0;
  return {
    schema: 'htorder.notification/1',
    event: 'digest',
    severity: trouble ? 'warning' : 'info',
    title: `Daily digest: ${counts.inputsDone} done, ${counts.inputsFailed} failed`,
    at: new Date(to).toISOString(),
    origin,
    digest: { ...counts, jobs: { ...counts.jobs }, from: new Date(from).toISOString(), to: new Date(to).toISOString() },
  };
}

export function emptyDigest(): DigestCounts {
  return { inputsDone: 0, inputsFailed: 0, inputsInDoubt: 0, jobs: {}, apiOutages: 0 };
}

/** Adds one finished input's jobs to the day's counts. */
export function countJobs(counts: DigestCounts, summary: ReportSummary | undefined): void {
  for (const [status, n] of Object.entries(nonZero(summary?.byStatus ?? {}))) {
    const s = status as JobStatus;
    counts.jobs[s] = (counts.jobs[s] ?? 0) + (n ?? 0);
  }
}

/**
 * The next time the clock shows `hhmm` (local time), strictly after `now`. Built from the
 * calendar date rather than by adding 24 h, so a daylight-saving change keeps the wall time.
 */
export function nextDigestAt(now: number, hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  const d = new Date(now);
  const at = new Date(d.getFullYear(), d.getMonth(), d.getDate(), h, m, 0, 0);
  if (at.getTime() <= now) at.setDate(at.getDate() + 1);
  return at.getTime();
}

/** `300 ms`, `45 s`, `12 min`, `3 h 5 min`, for titles. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const rest = min % 60;
  return `${Math.floor(min / 60)} h${rest ? ` ${rest} min` : ''}`;
}

/** Statuses in the report's order, those with none left out. */
export function nonZero(byStatus: Partial<Record<JobStatus, number>>): Partial<Record<JobStatus, number>> {
  const out: Partial<Record<JobStatus, number>> = {};
  for (const status of JOB_STATUSES) {
    const n = byStatus[status] ?? 0;
    if (n > 0) out[status] = n;
  }
  return out;
}
