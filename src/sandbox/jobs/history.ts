import { DAY_MS } from '../dates.js';
import type { CustomerState, JobRecord } from '../state.js';
import { enter, settle, STATUS } from './lifecycle.js';

/**
 * A few finished jobs every customer starts with (all Closed, so they show in
 * GET /Jobs/active only with includeClosedJobs, and in GET /Assets/{tag}/jobs).
 * Order numbers are `HIST-<n>` so they never collide with a manifest's.
 */
export function seedHistory(c: CustomerState, startMs: number): void {
  const first = c.assets[0];
  const other = c.assets.find((a, i) => i > 2 && !a.isArchived) ?? first;
  const delivery = c.region.deliveryOptions[0];
  const plans: [number, typeof first, number][] = [
    [60, first, 120],
    [35, other, 50],
    [20, first, 80],
  ];
  plans.forEach(([daysAgo, asset, quantity], i) => {
    const jobNumber = historyJobNumber(c.def.customerId, i);
    const dateInMs = startMs - daysAgo * DAY_MS;
    const dateOutMs = dateInMs + 3 * DAY_MS;
    const job: JobRecord = {
      jobNumber,
      customerId: c.def.customerId,
      region: c.region.code,
      description: `Reorder of ${asset.assetTag}`,
      comments: null,
      orderNumber: `HIST-${i + 1}`,
      dueDay: new Date(dateOutMs).toISOString().slice(0, 10),
      timeSensitive: false,
      mustDate: false,
      orderGroup: null,
      orderGroupSequence: null,
      customerUserId: c.users[0].id,
      creator: `${c.users[0].firstName} ${c.users[0].lastName}`,
      originCode: 'WEB',
      dateInMs,
      status: STATUS.InProduction,
      statusSinceMs: dateInMs,
      dateOutMs: null,
      location: c.region.locations[0],
      deliveryMethod: delivery.code,
      deliveryLabel: delivery.label,
      isCollection: false,
      lines: [
        {
          jobLineId: jobNumber * 100 + 1,
          assetSku: asset.assetTag,
          processCode: asset.processCode,
          garment: asset.garment,
          description: asset.description,
          comments: null,
          quantity,
          unitPrice: asset.priceBands[0]?.unitPrice ?? 0,
          customerReference: null,
          imageUrl: asset.assetUrl,
          gang: `G${jobNumber % 1000}`,
          jobLineStatus: null,
        },
      ],
      shippingAddresses: [{ trackingNumber: null, trackingLink: null }],
      invoiceNumber: null,
      totalJobCost: 0,
      taxTotal: 0,
    };
    // Dispatched three days after it came in (date out, tracking and invoice as for any job), then closed by the clock.
    enter(job, STATUS.Dispatched, dateOutMs);
    settle(job, startMs);
    c.jobs.set(jobNumber, job);
  });
}

/**
 * The number of a customer's `index`th history job: one of its own, as job numbers are across the
 * API. A saved sandbox state holds every customer a request touched, and is refused when two of
 * them hold one job number, so nz's 2001 and uk's 3001 must not share one. Below the first job
 * number the sandbox hands out (700001).
 */
function historyJobNumber(customerId: number, index: number): number {
  const thousands = Math.floor(customerId / 1000);
  const block = thousands >= 2 ? 50000 + (thousands - 2) * 10000 : 0;
  return 600000 + block + (customerId % 1000) * 10 + index + 1;
}
