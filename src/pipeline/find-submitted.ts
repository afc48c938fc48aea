import type { ApiClient } from '../api/client.js';
import type { ActiveJobDto } from '../api/types.js';

/**
 * Settles an unknown outcome (docs/architecture.md#exactly-once): searches `GET /Jobs/active` for jobs whose
 * orderNumber is EXACTLY `orderNumber`, closed jobs included, across every page.
 * searchText matches each word as a prefix (`PO-1` also finds `PO-10`), hence the exact
 * filter here. Cancelled jobs never appear in /Jobs/active (spec, editability rule 4): a job
 * created and then cancelled before we settle looks "not created". That window is accepted
 * and documented; htorder itself never cancels a job whose outcome it does not know.
 */
export async function findSubmitted(client: ApiClient, orderNumber: string): Promise<ActiveJobDto[]> {
  const matches: ActiveJobDto[] = [];
  const pages = client.jobs.iterateActive({ searchText: orderNumber, includeClosedJobs: true, pageSize: 100 });
  for await (const job of pages) {
    if (job.orderNumber === orderNumber) matches.push(job);
  }
  // Oldest first: if duplicates already exist (made outside htorder), the first one is ours.
  return matches.sort((a, b) => a.jobNumber - b.jobNumber);
}
