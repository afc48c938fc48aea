import type { ActiveJobDto, JobDto } from '../../api/types.js';
import { isoInstantMs } from '../../core/clock.js';
import type { JobTracking } from '../../report/tracking-model.js';

/**
 * Pure: the new tracking of one job from what this check read (the /Jobs/active entry, the
 * GET /Jobs/{n} answer, either or both) on top of the previous tracking. Fields only the
 * detail call has keep their previous values (with their detailCheckedAt) when it was not made.
 */
export interface Observation {
  active?: ActiveJobDto;
  job?: JobDto;
  /** Why the job could not be read (404 or an error); previous values are kept. */
  problem?: string;
}

export function buildTracking(previous: JobTracking | undefined, seen: Observation, checkedAt: string): JobTracking {
  const p = previous ?? empty(checkedAt);
  const { active: a, job: j } = seen;
  if (!a && !j) return { ...p, checkedAt, inActiveList: false, masterJobStatus: null, problem: seen.problem ?? null };
  // A detail read that failed is said, even when the list saw the job: the exit code alone would not say why.
  const t: JobTracking = { ...p, checkedAt, inActiveList: a !== undefined, problem: j ? null : (seen.problem ?? null) };
  t.masterJobStatus = a?.masterJobStatus ?? null;
  if (a) {
    t.status = a.masterJobStatus;
    t.dateDue = a.dateDue;
    t.dateOut = a.dateOut;
    t.shippedDaysToProcess = a.shippedDaysToProcess;
    // "Empty when none" (spec); a null from the API means the same.
    const tracking = Array.isArray(a.tracking) ? a.tracking : [];
    t.tracking = tracking.map((x) => ({ trackingNumber: x.trackingNumber, trackingLink: x.trackingLink }));
    if (a.permissions) {
      t.canEdit = a.permissions.canEdit;
      t.lockedReason = a.permissions.lockedReason;
    }
  }
  if (j) {
    // The detail answer is the fuller one; it wins where both speak.
    t.status = j.jobStatus;
    t.jobStatus = j.jobStatus;
    t.dateDue = j.dateDue;
    t.dateOut = j.dateOut;
    t.shippedDaysToProcess = j.shippedDaysToProcess;
    t.shippedDateStatus = j.shippedDateStatus;
    t.tracking = j.shippingAddresses
      .filter((s) => s.trackingNumber !== null || s.trackingLink !== null)
      .map((s) => ({ trackingNumber: s.trackingNumber, trackingLink: s.trackingLink }));
    t.invoiceNumber = j.invoiceNumber;
    t.invoiceFile = j.invoiceFile ? { uri: j.invoiceFile.uri, uriExpires: j.invoiceFile.uriExpires } : null;
    t.isCancelable = j.isCancelable;
    t.canEdit = j.permissions?.canEdit ?? null;
    t.lockedReason = j.permissions?.lockedReason ?? null;
    t.detailCheckedAt = checkedAt;
    // Not among the fields the spec shows: read only when it is the text of an option's code.
    const method = j.shippingAddresses.find((s) => typeof s.deliveryMethod === 'string')?.deliveryMethod;
    t.deliveryMethod = typeof method === 'string' ? method : (p.deliveryMethod ?? null);
  }
  return t;
}

function empty(checkedAt: string): JobTracking {
  return {
    checkedAt,
    status: null,
    inActiveList: false,
    jobStatus: null,
    masterJobStatus: null,
    dateDue: null,
    dateOut: null,
    shippedDaysToProcess: null,
    shippedDateStatus: null,
    tracking: [],
    invoiceNumber: null,
    invoiceFile: null,
    isCancelable: null,
    canEdit: null,
    lockedReason: null,
    detailCheckedAt: null,
    problem: null,
  };
}

/**
 * Pure: whether this check must also call GET /Jobs/{n} for a job, given its /Jobs/active
 * entry (undefined when absent) and its previous tracking:
 * - absent from the list: cancelled, closed (without --include-closed) or not this account's
 *   — only the detail call can say which; but a job already read as gone and locked for good
 *   (not editable, not cancelable) is final and not asked again;
 * - its status or despatch changed since the last check: isCancelable, shippedDateStatus and
 *   the invoice may have changed with it;
 * - shipped and no unexpired invoice link stored yet: the invoice appears after despatch.
 * A job seen for the first time, in the list and not shipped, needs nothing more.
 */
export function needsDetail(active: ActiveJobDto | undefined, previous: JobTracking | undefined, now: Date): boolean {
  if (!active) {
    const final =
      previous !== undefined &&
      !previous.inActiveList &&
      previous.detailCheckedAt !== null &&
      previous.problem === null &&
      previous.canEdit === false &&
      previous.isCancelable === false;
    return !final;
  }
  if (previous && (previous.masterJobStatus !== active.masterJobStatus || previous.dateOut !== active.dateOut))
    return true;
  if (active.dateOut !== null) {
    const link = previous?.invoiceFile;
    // An expiry that cannot be read is taken as passed: the detail is read again.
    if (!link || !((isoInstantMs(link.uriExpires) ?? 0) > now.getTime())) return true;
  }
  return false;
}
