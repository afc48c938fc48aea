import { parentPort, workerData } from 'node:worker_threads';
import { type CsvResultJob, writeCsvResult } from './write-result-csv.js';

/**
 * A worker thread's whole work: one CSV input's result.csv (writeCsvResult, the same code the
 * main thread runs for small inputs), started by write-result-csv.ts with the job as
 * `workerData`. It answers once: done, or failed.
 */
export type WorkerAnswer = { failed?: { message: string; code?: string } };

let answer: WorkerAnswer = {};
try {
  await writeCsvResult(workerData as CsvResultJob);
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  answer = { failed: { message: String(e?.message ?? err), code: e?.code } };
}
parentPort?.postMessage(answer);
