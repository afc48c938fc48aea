import { unusableAnswer } from './errors.js';
import type { ActiveJobDto, ActiveJobsEnvelope, ListEnvelope } from './types.js';

/** Stops a server that always says "there is more" from looping us forever. */
const MAX_PAGES = 10_000;

type Page<T> = Pick<ListEnvelope<T>, 'entities' | 'hasNext' | 'currentPage'>;

/**
 * Lazily yields every entity of a list-envelope endpoint (assets, users, transactions),
 * fetching page N+1 only when the consumer asks for more. Follows `currentPage`/`hasNext`.
 * A list that does not move (a page answered as an earlier one, or the same entities again)
 * is an API fault naming `route`, after one repeat: asking again would get the same answer.
 */
export async function* paginateList<T>(
  fetchPage: (page: number) => Promise<Page<T>>,
  firstPage = 1,
  route = 'a paged list',
): AsyncGenerator<T, void, undefined> {
  let page = firstPage;
  let previous: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const envelope = await fetchPage(page);
    const entities = envelope.entities;
    const why = stuckPage(page, envelope, previous);
    if (why !== undefined) throw unusableAnswer('GET', route, why);
    yield* entities;
    if (!envelope.hasNext || entities.length === 0) return;
    previous = JSON.stringify(entities);
    // Trust the server's page number when it gives one it has not already passed.
    page = (pageNumber(envelope.currentPage) ?? page) + 1;
  }
}

/** Why the answer to page `asked` shows a list that cannot be followed, if it does. */
function stuckPage<T>(asked: number, envelope: Page<T>, previous: string | undefined): string | undefined {
  if (!Array.isArray(envelope.entities)) return `page ${asked} holds no list`;
  const answered = pageNumber(envelope.currentPage);
  if (answered !== undefined && answered < asked)
    return `page ${asked} was answered as page ${answered}: the pages do not move`;
  if (previous !== undefined && JSON.stringify(envelope.entities) === previous)
    return `page ${asked} repeats page ${asked - 1}: the pages do not move`;
  return undefined;
}

/** The page number an answer gives, when it gives a usable one. */
function pageNumber(n: unknown): number | undefined {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/** The same for GET /Jobs/active, whose envelope says `pageNumber`/`hasNextPage`/`items`. */
export function paginateActiveJobs(
  fetchPage: (page: number) => Promise<ActiveJobsEnvelope>,
  firstPage = 1,
  route = '/Jobs/active',
): AsyncGenerator<ActiveJobDto, void, undefined> {
  return paginateList(
    async (page) => {
      const { items, hasNextPage, pageNumber } = await fetchPage(page);
      return { entities: items, hasNext: hasNextPage, currentPage: pageNumber };
    },
    firstPage,
    route,
  );
}
