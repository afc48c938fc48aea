import type { ActiveJobDto, ActiveJobsEnvelope, JobDto } from '../api/types.js';
import { isoInstantMs } from '../core/clock.js';
import { type LedgerStore, lookAtEntry } from '../storage/ledger/model.js';
import { LISTING_PAGE_SIZE, MAX_LISTING_PAGES } from './find-submitted.js';

/**
 * Whether a ledger that vouches for an account is still the only writer to it
 * (docs/architecture.md#exactly-once): a job created through the API since the ledger last
 * looked, whose order the ledger does not know, was made by another writer — another host with
 * its own state dir, a cron job moved elsewhere — and from then on an order the ledger has
 * never seen may exist all the same. Cheap enough for the start of every run: the account's
 * newest jobs (`GET /Jobs/active?includeClosedJobs=true`, newest first: the spec's default
 * order) down to the newest job the last look saw, one page when nothing else was created.
 */
export interface WriterCheck {
  /** A job another writer made, when one was seen. */
  other?: ActiveJobDto;
  /** The newest job number listed: where the next look stops. */
  newest?: number;
  /**
   * Whether every job since the last look was seen: false when the listing stopped at its
   * page limit first, or when there was no last look and the newest unknown job's creation
   * time could not be read.
   */
  complete: boolean;
  /** Calls made. */
  calls: number;
}

export interface WriterSources {
  fetchPage(page: number, pageSize: number): Promise<ActiveJobsEnvelope>;
  /** GET /Jobs/{n}: its `dateIn`, for a ledger that has no last look to stop at. */
  job(jobNumber: number): Promise<JobDto>;
  ledger: LedgerStore;
  account: string;
}

/** What the last look saw: the newest job number, or (none yet) when the ledger began to vouch. */
export type LastLook = { checkedThrough: number } | { vouchedSince: string };

/**
 * Whether the job could be an order of a manifest: one with an order number, made through the
 * API (htorder sends no X-Application-Name, so its jobs' origin is the default `API`). A job
 * ordered in the dashboard or by a shop's own integration is not another htorder's.
 */
function mayBeOurs(job: ActiveJobDto): job is ActiveJobDto & { orderNumber: string } {
  if (typeof job.orderNumber !== 'string') return false;
  // An origin the API does not give (not shown for every listing) is taken to be the API's.
  return job.originCode === null || job.originCode === undefined || job.originCode.toUpperCase() === 'API';
}

/**
 * Whether this ledger made the job: it holds the job's order, as this job (or as an intent, its
 * outcome not yet known). An entry that cannot be read is this ledger's own record of the order
 * all the same: no sign of another writer (the order itself is not sent while it stays so).
 * Looked up by the job's order number exactly as the API gives it: one of our own jobs whose
 * number the API stored otherwise (find-submitted.ts, foldOrderNumber) reads as another
 * writer's, which only makes the ledger search before it sends; taking a look-alike for ours
 * could hide a real other writer.
 */
async function ours(job: ActiveJobDto & { orderNumber: string }, src: WriterSources): Promise<boolean> {
  const entry = await lookAtEntry(src.ledger, { account: src.account, orderNumber: job.orderNumber });
  if (entry === 'unreadable') return true;
  return entry !== undefined && (entry.state === 'intent' || entry.jobNumber === job.jobNumber);
}

/** Looks for a job another writer made since `last`; see WriterCheck. */
export async function findOtherWriter(src: WriterSources, last: LastLook): Promise<WriterCheck> {
  const since = 'checkedThrough' in last ? last.checkedThrough : undefined;
  const seen = new Set<number>();
  const foreign: ActiveJobDto[] = [];
  let newest: number | undefined;
  let calls = 0;
  let reached = false;
  for (let page = 1; page <= MAX_LISTING_PAGES; page++) {
    const listed = await src.fetchPage(page, LISTING_PAGE_SIZE);
    calls++;
    for (const job of listed.items) {
      if (!Number.isSafeInteger(job.jobNumber) || seen.has(job.jobNumber)) continue;
      seen.add(job.jobNumber);
      newest = Math.max(newest ?? job.jobNumber, job.jobNumber);
      if (since !== undefined && job.jobNumber <= since) reached = true;
      else if (mayBeOurs(job) && !(await ours(job, src))) foreign.push(job);
    }
    // Without a last look, the first page is all that is read (its newest unknown job's date tells).
    if (since === undefined || reached || !listed.hasNextPage || listed.items.length === 0) {
      reached = true;
      break;
    }
  }
  if (since !== undefined || foreign.length === 0) return { ...otherOf(foreign), newest, complete: reached, calls };
  // No last look: the newest unknown job tells whether anything unknown was made since the
  // ledger began to vouch (job numbers grow with time: the listing's newest first).
  const latest = foreign.reduce((a, b) => (b.jobNumber > a.jobNumber ? b : a));
  let dateIn: string | null;
  try {
    dateIn = (await src.job(latest.jobNumber)).dateIn;
  } catch {
    return { newest, complete: false, calls: calls + 1 };
  }
  const created = isoInstantMs(dateIn);
  const vouchedSince = isoInstantMs((last as { vouchedSince: string }).vouchedSince);
  // A creation time the API does not give, or one that cannot be read, is taken to be since.
  const after = created === undefined || vouchedSince === undefined || created >= vouchedSince;
  return { ...(after ? { other: latest } : {}), newest, complete: true, calls: calls + 1 };
}

function otherOf(foreign: ActiveJobDto[]): { other?: ActiveJobDto } {
  return foreign.length > 0 ? { other: foreign[0] } : {};
}
