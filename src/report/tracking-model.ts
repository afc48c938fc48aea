import type { Tracking } from '../api/types.js';

/**
 * What `htorder track` knows about one submitted job: the `tracking` section it writes on
 * the job in X.result.json. Field names are the API's. Statuses are shown as the API sends
 * them: the set grows over time and is never hard-coded (spec, States).
 *
 * Two sources with different costs: `GET /Jobs/active` (100 jobs per call) gives the status,
 * dates, tracking and edit permission; `GET /Jobs/{n}` (one call per job) adds jobStatus,
 * shippedDateStatus, isCancelable and the invoice. The second is asked only when needed
 * (needsDetail in src/pipeline/track/build-tracking.ts), so its fields carry their own time,
 * `detailCheckedAt`.
 */
export interface JobTracking {
  /** When htorder last looked (ISO 8601 UTC). */
  checkedAt: string;
  /** The job's status at checkedAt, from whichever source was read then. */
  status: string | null;
  /** Whether the job was in GET /Jobs/active at checkedAt (cancelled jobs never are; closed ones only with --include-closed). */
  inActiveList: boolean;
  /** From GET /Jobs/{n}, as of detailCheckedAt. */
  jobStatus: string | null;
  /** From GET /Jobs/active, as of checkedAt (null when not in the list). */
  masterJobStatus: string | null;
  dateDue: string | null;
  /** When it was shipped or dispatched; null until then. */
  dateOut: string | null;
  /** Negative early, positive late, relative to the due date. */
  shippedDaysToProcess: number | null;
  /** The API's own words: shipped early, on time or late (from GET /Jobs/{n}). */
  shippedDateStatus: string | null;
  /** Tracking numbers and links, one per shipment; empty until shipped. */
  tracking: Tracking[];
  invoiceNumber: string | null;
  /**
   * The invoice link (signed and time-limited: `uriExpires`). Stored here, never printed or
   * logged with its query string.
   */
  invoiceFile: { uri: string; uriExpires: string } | null;
  /** From GET /Jobs/{n} at detailCheckedAt; null when never read. Read again before any cancel. */
  isCancelable: boolean | null;
  canEdit: boolean | null;
  lockedReason: string | null;
  /** When the GET /Jobs/{n} fields were read; null when never. */
  detailCheckedAt: string | null;
  /** Why the job could not be read this time (e.g. not found on this account); null when it was. */
  problem: string | null;
  /** The delivery option's code, from GET /Jobs/{n}'s shipping address; absent or null when not read. */
  deliveryMethod?: string | null;
}

/** One job to follow, and where its tracking is written (when it came from a report). */
export interface TrackTarget {
  jobNumber: number;
  orderNumber: string | null;
  /** The X.result.json holding the job, if any (ledger-only jobs are shown, not written). */
  reportFile?: string;
  /** Index of the job in that report. */
  jobIndex?: number;
  /** The tracking written by the previous check. */
  previous?: JobTracking;
}
