import type { ActiveJobDto, JobDto } from '../../api/types.js';
import { DAY_MS, isoSeconds } from '../dates.js';
import type { JobRecord } from '../state.js';
import { dueString } from './create.js';
import { canEdit, isCancelable, lockedReason, STATUS } from './lifecycle.js';

/** Days between due date and dispatch: negative early, positive late. */
function shippedDays(job: JobRecord): number | null {
  if (job.dateOutMs === null) return null;
  const due = Date.parse(`${job.dueDay}T23:59:59Z`);
  return Math.round((job.dateOutMs - due) / DAY_MS);
}

export function toJobDto(job: JobRecord, nowMs: number): JobDto {
  const days = shippedDays(job);
  const invoiced = (job.status === STATUS.Dispatched || job.status === STATUS.Closed) && job.invoiceNumber !== null;
  return {
    jobNumber: job.jobNumber,
    description: job.description,
    comments: job.comments,
    jobStatus: job.status,
    orderNumber: job.orderNumber,
    dateDue: dueString(job),
    mustDate: job.mustDate,
    creator: job.creator,
    invoiceNumber: job.invoiceNumber,
    orderGroup: job.orderGroup,
    orderGroupSequence: job.orderGroupSequence,
    customerId: job.customerId,
    dateIn: isoSeconds(new Date(job.dateInMs)),
    dateOut: job.dateOutMs === null ? null : isoSeconds(new Date(job.dateOutMs)),
    shippedDateStatus:
      days === null ? null : days < 0 ? 'Shipped early' : days === 0 ? 'Shipped on time' : 'Shipped late',
    shippedDaysToProcess: days,
    processingDays: job.dateOutMs === null ? null : Math.round(((job.dateOutMs - job.dateInMs) / DAY_MS) * 10) / 10,
    taxTotal: job.taxTotal,
    isCancelable: isCancelable(job.status),
    permissions: { canEdit: canEdit(job.status), lockedReason: lockedReason(job.status) },
    location: { name: job.location.name, timezone: job.location.timezone },
    invoiceFile: invoiced
      ? {
          uri: `https://cdn.sandbox.invalid/invoices/${job.invoiceNumber}.pdf?expires=${Math.floor(nowMs / 1000) + 3600}&sig=sandbox`,
          uriExpires: isoSeconds(new Date(nowMs + 3_600_000)),
        }
      : null,
    lines: job.lines.map((l) => ({ ...l })),
    shippingAddresses: job.shippingAddresses.map((a) => ({ ...a })),
  };
}

export function toActiveJobDto(job: JobRecord): ActiveJobDto {
  return {
    permissions: { canEdit: canEdit(job.status), lockedReason: lockedReason(job.status) },
    jobNumber: job.jobNumber,
    masterJobStatus: job.status,
    originCode: job.originCode,
    description: job.description,
    mustDate: job.mustDate,
    dateDue: dueString(job),
    dateOut: job.dateOutMs === null ? null : isoSeconds(new Date(job.dateOutMs)),
    shippedDaysToProcess: shippedDays(job),
    orderNumber: job.orderNumber,
    orderGroup: job.orderGroup,
    orderGroupSequence: job.orderGroupSequence,
    tracking: job.shippingAddresses
      .filter((a) => a.trackingNumber !== null || a.trackingLink !== null)
      .map((a) => ({ trackingNumber: a.trackingNumber, trackingLink: a.trackingLink })),
  };
}
