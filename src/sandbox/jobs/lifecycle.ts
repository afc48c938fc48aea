import type { JobRecord } from '../state.js';

/**
 * The job lifecycle of docs/sandbox.md (Lifecycle), on the sandbox clock. Statuses are the
 * job-status lookup's names; timed transitions are applied when a job is read (settle).
 */
export const STATUS = {
  Received: 'Received',
  ArtworkPending: 'Artwork Pending',
  Scheduled: 'Scheduled',
  InProduction: 'In Production',
  Dispatched: 'Dispatched',
  Closed: 'Closed',
  Cancelled: 'Cancelled',
  Returned: 'Returned',
  OnHold: 'On Hold',
} as const;

const HOUR = 3_600_000;

/** Automatic, time-driven transitions: [from, after ms, to]. */
const TIMED: Record<string, [number, string]> = {
  [STATUS.Received]: [1 * HOUR, STATUS.Scheduled],
  [STATUS.Scheduled]: [23 * HOUR, STATUS.InProduction],
  [STATUS.InProduction]: [24 * HOUR, STATUS.Dispatched],
  [STATUS.Dispatched]: [5 * 24 * HOUR, STATUS.Closed],
};

/** What an admin advance without a named status moves to. */
export const NEXT_STATUS: Record<string, string> = {
  [STATUS.Received]: STATUS.Scheduled,
  [STATUS.ArtworkPending]: STATUS.Scheduled,
  [STATUS.OnHold]: STATUS.Scheduled,
  [STATUS.Scheduled]: STATUS.InProduction,
  [STATUS.InProduction]: STATUS.Dispatched,
  [STATUS.Dispatched]: STATUS.Closed,
};

const CANCELABLE = new Set<string>([STATUS.Received, STATUS.ArtworkPending, STATUS.Scheduled, STATUS.OnHold]);
const LOCKED = new Set<string>([STATUS.Dispatched, STATUS.Closed, STATUS.Returned, STATUS.Cancelled]);
/** Statuses after which a job has left the factory. */
const SHIPPED = new Set<string>([STATUS.Dispatched, STATUS.Closed, STATUS.Returned]);

export const isCancelable = (status: string): boolean => CANCELABLE.has(status);
export const canEdit = (status: string): boolean => !LOCKED.has(status);
export const lockedReason = (status: string): string | null =>
  LOCKED.has(status) ? `Job is ${status} and can no longer be edited.` : null;

/** Applies every timed transition due by `nowMs` (lazily, on read). */
export function settle(job: JobRecord, nowMs: number): JobRecord {
  for (;;) {
    const rule = TIMED[job.status];
    if (!rule) return job;
    const at = job.statusSinceMs + rule[0];
    if (at > nowMs) return job;
    enter(job, rule[1], at);
  }
}

/** Moves a job into `status` at `atMs`, with that status's side effects. */
export function enter(job: JobRecord, status: string, atMs: number): void {
  job.status = status;
  job.statusSinceMs = atMs;
  for (const line of job.lines) line.jobLineStatus = status;
  if (SHIPPED.has(status) && job.dateOutMs === null) {
    job.dateOutMs = atMs;
    job.invoiceNumber = `INV-${job.jobNumber}`;
    job.shippingAddresses = job.shippingAddresses.map((a, i) =>
      job.isCollection
        ? { ...a, trackingNumber: null, trackingLink: null }
        : {
            ...a,
            trackingNumber: `${job.deliveryMethod}${job.jobNumber}${i + 1}`,
            trackingLink: `https://track.sandbox.invalid/${job.deliveryMethod}/${job.jobNumber}${i + 1}`,
          },
    );
  }
}
