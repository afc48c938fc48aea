import type { ActiveJobDto, ActiveJobsEnvelope, ListEnvelope } from './types.js';

/** Stops a server that always says "there is more" from looping us forever. */
const MAX_PAGES = 10_000;

/**
 * Lazily yields every entity of a list-envelope endpoint (assets, users, transactions),
 * fetching page N+1 only when the consumer asks for more. Follows `currentPage`/`hasNext`.
 */
export async function* paginateList<T>(
  fetchPage: (page: number) => Promise<Pick<ListEnvelope<T>, 'entities' | 'hasNext' | 'currentPage'>>,
  firstPage = 1,
): AsyncGenerator<T, void, undefined> {
  let page = firstPage;
  for (let n = 0; n < MAX_PAGES; n++) {
    const envelope = await fetchPage(page);
    yield* envelope.entities;
    if (!envelope.hasNext || envelope.entities.length === 0) return;
    // Trust the server's page number, but never go backwards.
    page = Math.max(page, envelope.currentPage) + 1;
  }
}

/** The same for GET /Jobs/active, whose envelope says `pageNumber`/`hasNextPage`/`items`. */
export function paginateActiveJobs(
  fetchPage: (page: number) => Promise<ActiveJobsEnvelope>,
  firstPage = 1,
): AsyncGenerator<ActiveJobDto, void, undefined> {
  return paginateList(async (page) => {
    const { items, hasNextPage, pageNumber } = await fetchPage(page);
    return { entities: items, hasNext: hasNextPage, currentPage: pageNumber };
  }, firstPage);
}
