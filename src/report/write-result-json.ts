import type { ResultReport } from './model.js';
import { writeAtomicStream } from './atomic-stream.js';

/**
 * Writes X.result.json atomically. Jobs are serialised one at a time, so a manifest with a
 * million items never becomes one giant string in memory.
 */
export async function writeResultJson(path: string, report: ResultReport): Promise<void> {
  await writeAtomicStream(path, resultJsonChunks(report));
}

export function* resultJsonChunks(report: ResultReport): Generator<string> {
  const { jobs, ...head } = report;
  const text = JSON.stringify(head, null, 2);
  yield `${text.slice(0, text.lastIndexOf('\n}'))},\n  "jobs": [`;
  for (let i = 0; i < jobs.length; i++) {
    yield `${i === 0 ? '' : ','}\n    ${JSON.stringify(jobs[i], null, 2).replace(/\n/g, '\n    ')}`;
  }
  yield jobs.length === 0 ? ']\n}\n' : '\n  ]\n}\n';
}
