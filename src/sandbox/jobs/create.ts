import type { JobCreateResponse, JobLineDto, PriceCodeDto } from '../../api/types.js';
import { assetFromPriceCode } from '../data/assets.js';
import { isoSeconds } from '../dates.js';
import type { CustomerState, JobRecord, World } from '../state.js';
import type { BoundCandidate } from './binding.js';
import { STATUS } from './lifecycle.js';
import { round2 } from './pricing.js';
import type { JobPlan, PlannedLine } from './validate.js';

/**
 * Files a validated job: assigns the job number, files each new-print line as a new asset
 * (reorderable at once via GET /Assets/{tag}), and answers the documented create response.
 */
export function createJob(
  world: World,
  customer: CustomerState,
  c: BoundCandidate,
  plan: JobPlan,
): { job: JobRecord; response: JobCreateResponse } {
  const nowMs = world.clock.nowMs();
  const jobNumber = world.nextJobNumber++;
  world.dirty = true;
  const expectingArtwork = plan.lines.some((l) => l.needsArtwork);
  // A printer that fetches artwork itself waits for it like for an upload (artwork-fetch.ts).
  const fetching = world.fetchArtwork && artworkLinks(c).length > 0;
  const status = expectingArtwork || fetching ? STATUS.ArtworkPending : STATUS.Received;
  const da = c.deliveryAddress ?? {};
  const lines = jobLines(customer, plan, jobNumber, status, nowMs);
  const job: JobRecord = {
    jobNumber,
    customerId: customer.def.customerId,
    region: customer.region.code,
    description: c.description ?? null,
    comments: c.orderComment ?? null,
    orderNumber: c.orderNumber ?? null,
    dueDay: plan.dueDay,
    timeSensitive: c.timeSensitive === true,
    mustDate: c.mustDate === true && c.dateDue !== undefined,
    orderGroup: c.orderGroup ?? null,
    orderGroupSequence: c.orderGroupSequence ?? null,
    customerUserId: plan.user.id,
    creator: `${plan.user.firstName} ${plan.user.lastName}`,
    originCode: plan.originCode,
    dateInMs: nowMs,
    status,
    statusSinceMs: nowMs,
    dateOutMs: null,
    location: plan.location,
    deliveryMethod: plan.delivery.code,
    deliveryLabel: plan.delivery.label,
    isCollection: plan.delivery.isCollection,
    lines,
    shippingAddresses: [
      {
        contactName: da.contactName ?? null,
        organisation: da.organisation ?? null,
        streetAddress: da.streetAddress ?? null,
        city: da.city ?? null,
        state: da.stateCode ?? da.state ?? null,
        postalCode: da.postalCode ?? null,
        countryCodeISO2: da.countryCodeISO2 ?? null,
        deliveryMethod: plan.delivery.code,
        trackingNumber: null,
        trackingLink: null,
      },
    ],
    invoiceNumber: null,
    totalJobCost: plan.totalJobCost,
    taxTotal: round2(plan.totalJobCost * customer.region.taxRate),
  };
  customer.jobs.set(jobNumber, job);
  const response: JobCreateResponse = {
    jobNumber,
    location: plan.location.name,
    dateDue: dueString(job),
    totalJobCost: plan.totalJobCost,
    expectingArtworkToBeUploaded: expectingArtwork,
    jobLineDetails: plan.lines.map((l, i) => ({
      needsArtworkToBeUploaded: l.needsArtwork,
      customerReference: l.customerReference ?? '',
      quantity: l.quantity,
      newAssetSku: l.priceCode ? lines[i].assetSku : null,
      jobLineLabelUrl: null,
    })),
  };
  return { job, response };
}

/** The job's lines; each new-print line files its asset. */
function jobLines(customer: CustomerState, plan: JobPlan, jobNumber: number, status: string, nowMs: number) {
  return plan.lines.map((l, i): JobLineDto => {
    const assetSku = l.priceCode ? fileNewAsset(customer, l.priceCode, l, nowMs) : (l.asset?.assetTag ?? null);
    return {
      jobLineId: jobNumber * 100 + i + 1,
      assetSku,
      processCode: l.processCode,
      garment: l.garment,
      description: l.description,
      comments: l.comments,
      quantity: l.quantity,
      unitPrice: l.unitPrice,
      customerReference: l.customerReference,
      imageUrl: assetSku ? `https://cdn.sandbox.invalid/assets/${assetSku}.png?size=100` : null,
      gang: null,
      jobLineStatus: status,
    };
  });
}

/** Files a new-print line as the customer's next asset and answers its tag. */
function fileNewAsset(customer: CustomerState, priceCode: PriceCodeDto, l: PlannedLine, nowMs: number): string {
  const tag = `${customer.def.assetPrefix}${customer.nextAssetNumber++}`;
  const asset = assetFromPriceCode(
    priceCode,
    tag,
    customer.def.customerId * 1000 + customer.assets.length + 1,
    customer.def.customerId,
    customer.def.priceTierCode,
    isoSeconds(new Date(nowMs)),
    l.customerReference ?? priceCode.description ?? tag,
    null,
    l.externalId ?? null,
  );
  customer.assets.push(asset);
  customer.assetsByTag.set(tag, asset);
  return tag;
}

/** Due date in the location's timezone, without offset; time-sensitive jobs carry the 15:00 cut. */
export function dueString(job: Pick<JobRecord, 'dueDay' | 'timeSensitive'>): string {
  return `${job.dueDay}T${job.timeSensitive ? '15:00:00' : '00:00:00'}`;
}

/** The artwork links of a candidate's lines, in line order. */
export function artworkLinks(c: BoundCandidate): string[] {
  return (c.items ?? []).flatMap((item) => {
    const link = (item as { externalArtworkUrl?: unknown } | undefined)?.externalArtworkUrl;
    return typeof link === 'string' && link !== '' ? [link] : [];
  });
}
