import type { ApiClient } from '../api/client.js';
import type { ActiveJobDto, ActiveJobsEnvelope } from '../api/types.js';

/**
 * The jobs an account holds for one order number: `exact`, those carrying it as htorder spells
 * it (oldest first), and `lookalikes`, those whose order number differs from it only as an API
 * might have changed it on the way (the same foldOrderNumber).
 */
export interface OrderJobs {
  exact: ActiveJobDto[];
  lookalikes: ActiveJobDto[];
}

/**
 * An order number folded to what survives the changes an API may make to one it stores or
 * echoes, which the spec leaves open: blanks around it or doubled inside it, letter case, and
 * the Unicode form (NFKC, so composed and decomposed accents and full-width letters fold
 * together). A cut to some length is not folded: the spec gives orderNumber no maximum, and
 * counting every prefix ("PO-1" of "PO-10") would hold orders for their neighbours. Upper case
 * first, then lower: letters whose capitals are longer fold together (ß and SS, ſ and s).
 */
export function foldOrderNumber(orderNumber: string): string {
  return orderNumber.normalize('NFKC').trim().replace(/\s+/gu, ' ').toUpperCase().toLowerCase();
}

/**
 * Settles an unknown outcome (docs/architecture.md#exactly-once): searches `GET /Jobs/active` for jobs whose
 * orderNumber is EXACTLY `orderNumber`, closed jobs included, across every page, and for its
 * look-alikes (OrderJobs). searchText matches each word as a prefix (`PO-1` also finds `PO-10`),
 * hence the filter here. Cancelled jobs never appear in /Jobs/active (spec, editability rule 4): a job
 * created and then cancelled before we settle looks "not created". That window is accepted
 * and documented; htorder itself never cancels a job whose outcome it does not know.
 */
export async function findSubmitted(client: ApiClient, orderNumber: string): Promise<OrderJobs> {
  // By job number: a job listed twice (a page repeating one, a job shifted across a page boundary
  // by one created meanwhile) is one job, never "two jobs carry this order number".
  const exact = new Map<number, ActiveJobDto>();
  const lookalikes = new Map<number, ActiveJobDto>();
  const folded = foldOrderNumber(orderNumber);
  const pages = client.jobs.iterateActive({ searchText: orderNumber, includeClosedJobs: true, pageSize: 100 });
  for await (const job of pages) {
    if (job.orderNumber === orderNumber) exact.set(job.jobNumber, job);
    else if (typeof job.orderNumber === 'string' && foldOrderNumber(job.orderNumber) === folded)
      lookalikes.set(job.jobNumber, job);
  }
  return { exact: oldestFirst(exact.values()), lookalikes: oldestFirst(lookalikes.values()) };
}

/** Oldest first: if duplicates already exist (made outside htorder), the first one is ours. */
function oldestFirst(jobs: Iterable<ActiveJobDto>): ActiveJobDto[] {
  return [...jobs].sort((a, b) => a.jobNumber - b.jobNumber);
}

/**
 * What one listing of the account (`GET /Jobs/active?includeClosedJobs=true`, every page) says
 * about the orders a ledger has never seen: the jobs of each order number found, oldest first.
 * `complete`: every page was read and agreed with the others, so an order number it does not
 * hold has no job (as far as a search would say); otherwise only the jobs it holds are known,
 * and any other order is searched as before.
 */
export interface AccountListing {
  complete: boolean;
  jobs: ReadonlyMap<string, readonly ActiveJobDto[]>;
  /** The same jobs by their folded order number (foldOrderNumber), for an order's look-alikes. */
  folded: ReadonlyMap<string, readonly ActiveJobDto[]>;
  /** Pages read (calls made). */
  pages: number;
}

/** The most jobs asked for per page (spec, Limits: pageSize at most 100). */
export const LISTING_PAGE_SIZE = 100;
/** The most pages a listing reads, whatever the account's size: beyond it, orders are searched. */
export const MAX_LISTING_PAGES = 200;

/** The first page's word on how many pages the listing has, if it says anything usable. */
export function listedPages(first: ActiveJobsEnvelope): number | undefined {
  const pages = first.totalPages;
  if (Number.isSafeInteger(pages) && pages >= 0) return pages;
  const size = first.pageSize > 0 ? first.pageSize : first.items.length;
  if (Number.isSafeInteger(first.totalCount) && first.totalCount >= 0 && size > 0)
    return Math.ceil(first.totalCount / size);
  return undefined;
}

/**
 * How many pages a listing may read to check `orders` order numbers: reading the whole
 * account must cost fewer calls than one search per order. With a total the first page gives,
 * the listing's size; without one, a hundredth of the orders (at least one page), after which
 * a listing that has not ended is given up for searches (the pages cost at most a hundredth
 * more). 0: search instead.
 */
export function listingBudget(orders: number, first: ActiveJobsEnvelope): number {
  const pages = listedPages(first);
  if (pages === undefined) return Math.min(MAX_LISTING_PAGES, Math.max(1, Math.ceil(orders / LISTING_PAGE_SIZE)));
  return pages < orders && pages <= MAX_LISTING_PAGES ? Math.max(1, pages) : 0;
}

/**
 * Lists the account's jobs once to check `orders` order numbers the ledger has never seen,
 * when that costs fewer calls than one search per order (listingBudget): the first page is
 * asked for in any case (it tells the size), and its jobs count even when the rest is not
 * read. The listing is complete only when its last page says so, every page gave the same
 * total, and it held at least that many distinct jobs: a job cancelled between two pages
 * shifts the rest forward and a page boundary could skip one, which the changed total shows.
 * Jobs are listed newest first (the spec's default order), so a job created meanwhile shifts
 * the others back, repeating one rather than skipping one.
 */
export async function listAccount(
  fetchPage: (page: number, pageSize: number) => Promise<ActiveJobsEnvelope>,
  orders: number,
): Promise<AccountListing> {
  const byNumber = new Map<number, ActiveJobDto>();
  const first = await fetchPage(1, LISTING_PAGE_SIZE);
  for (const job of first.items) byNumber.set(job.jobNumber, job);
  const budget = listingBudget(orders, first);
  let last = first;
  let pages = 1;
  let agreed = true;
  while (last.hasNextPage && last.items.length > 0 && pages < budget) {
    last = await fetchPage(pages + 1, LISTING_PAGE_SIZE);
    pages++;
    if (last.totalCount !== first.totalCount) agreed = false;
    for (const job of last.items) byNumber.set(job.jobNumber, job);
  }
  const ended = !last.hasNextPage;
  const whole = !Number.isSafeInteger(first.totalCount) || byNumber.size >= first.totalCount;
  const complete = budget > 0 && ended && agreed && whole;
  const jobs = [...byNumber.values()];
  return { complete, jobs: byOrderNumber(jobs, (n) => n), folded: byOrderNumber(jobs, foldOrderNumber), pages };
}

/**
 * What the listing says of one order, as a search would: its jobs when it lists any, else (a
 * complete listing) its look-alikes; undefined when an incomplete listing holds no exact job,
 * as the pages it did not read may (the order is searched).
 */
export function listedJobs(listing: AccountListing, orderNumber: string): OrderJobs | undefined {
  const exact = listing.jobs.get(orderNumber);
  if (exact) return { exact: [...exact], lookalikes: [] };
  if (!listing.complete) return undefined;
  const near = listing.folded.get(foldOrderNumber(orderNumber)) ?? [];
  return { exact: [], lookalikes: near.filter((job) => job.orderNumber !== orderNumber) };
}

function byOrderNumber(jobs: Iterable<ActiveJobDto>, key: (n: string) => string): Map<string, ActiveJobDto[]> {
  const out = new Map<string, ActiveJobDto[]>();
  for (const job of jobs) {
    if (typeof job.orderNumber !== 'string') continue;
    const k = key(job.orderNumber);
    const list = out.get(k);
    if (list) list.push(job);
    else out.set(k, [job]);
  }
  for (const list of out.values()) list.sort((a, b) => a.jobNumber - b.jobNumber);
  return out;
}
