import { parentPort, workerData } from 'node:worker_threads';
import { NotVerbatim } from './csv-record-scanner.js';
import { type VerbatimCopy, writeVerbatimCsv } from './verbatim-csv.js';

/**
 * A worker thread's whole work: one verbatim copy of result.csv (verbatim-csv.ts, the same code
 * the main thread runs for small inputs), started by write-result-csv.ts with the copy as
 * `workerData`, its row table handed over (transferred, not copied). It answers once: done, not
 * verbatim (the table handed back, for the main thread to re-parse with), or failed.
 */
export type WorkerAnswer =
  | { done: true }
  | { notVerbatim: string; itemTail: Int32Array<ArrayBuffer> }
  | { failed: { message: string; code?: string; stack?: string } };

const copy = workerData as VerbatimCopy;
let answer: WorkerAnswer;
try {
  await writeVerbatimCsv(copy);
  answer = { done: true };
} catch (err) {
  if (err instanceof NotVerbatim) answer = { notVerbatim: err.message, itemTail: copy.cells.itemTail };
  else {
    const e = err as NodeJS.ErrnoException;
    answer = { failed: { message: String(e?.message ?? err), code: e?.code, stack: e?.stack } };
  }
}
parentPort?.postMessage(answer, 'itemTail' in answer ? [answer.itemTail.buffer] : []);
