import { itemsPending, peekItems } from './lazy-items.js';
import type { JobResult, ResultReport } from './model.js';
import { type NewFileOptions, writeFileAtomic } from '../storage/atomic-write.js';

/**
 * Writes X.result.json atomically. Jobs are serialised a batch at a time, so a manifest with
 * a million items never becomes one giant string in memory, and items not yet built are
 * serialised from transient copies rather than built and kept (lazy-items.ts).
 */
export async function writeResultJson(path: string, report: ResultReport, file?: NewFileOptions): Promise<void> {
  await writeFileAtomic(path, resultJsonChunks(report), file);
}

/** Jobs per JSON.stringify call: big enough to amortise the call, small enough to stay young garbage. */
export const BATCH_JOBS = 64;

/** The same text as `JSON.stringify(report, null, 2) + '\n'`, a batch of jobs at a time. */
export function* resultJsonChunks(report: ResultReport): Generator<string> {
  const { jobs, ...head } = report;
  yield resultJsonHead(head);
  for (let from = 0; from < jobs.length; from += BATCH_JOBS) {
    yield `${jobsSeparator(from)}${batchJson(jobs.slice(from, from + BATCH_JOBS))}`;
  }
  yield resultJsonTail(jobs.length);
}

/** The report's text up to and including the opening bracket of `"jobs"`. */
export function resultJsonHead(head: Omit<ResultReport, 'jobs'>): string {
  const text = JSON.stringify(head, null, 2);
  return `${text.slice(0, text.lastIndexOf('\n}'))},\n  "jobs": [`;
}

/** What comes before the batch that starts with job `from`. */
export const jobsSeparator = (from: number): string => (from === 0 ? '\n' : ',\n');

/** The report's text after its last job (or after `[` when it has none). */
export const resultJsonTail = (jobCount: number): string => (jobCount === 0 ? ']\n}\n' : '\n  ]\n}\n');

/**
 * A batch of jobs as they appear in the whole report's JSON, without the separator before it:
 * wrapped as the report wraps them, they come out indented exactly as in the whole report.
 */
export function batchJson(batch: readonly JobResult[]): string {
  const wrapped = JSON.stringify({ jobs: batch.map(jobView) }, null, 2);
  return wrapped.slice(WRAP_HEAD.length, wrapped.length - WRAP_TAIL.length);
}

const WRAP_HEAD = '{\n  "jobs": [\n';
const WRAP_TAIL = '\n  ]\n}';

/** The job itself once its items are built; otherwise a copy (same keys, same order) with transient items. */
function jobView(job: JobResult): unknown {
  if (!itemsPending(job)) return job;
  const view: Record<string, unknown> = {};
  for (const key of Object.keys(job))
    view[key] = key === 'items' ? peekItems(job) : (job as unknown as Record<string, unknown>)[key];
  return view;
}
