import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the heap grow past what a full collection found live before the next one:
 * 1 + percent/100. V8's own factor reaches about four for a heap the size a long run's becomes,
 * so a run holding a big input's jobs peaked at twice or more what it kept. Growing by half
 * keeps the peak near what is live, for more frequent full collections that a run mostly
 * waiting on the API does not feel (`npm run bench -- --memory` shows both).
 */
export const HEAP_GROWING_PERCENT = 50;

const FLAG = '--heap-growing-percent';

/** The flag to set, unless node was started with one of its own (`node --heap-growing-percent=N …`). */
export function heapGrowthFlag(execArgv: readonly string[]): string | undefined {
  const given = execArgv.some(
    (arg) => arg === FLAG || arg.startsWith(`${FLAG}=`) || arg.startsWith('--heap_growing_percent'),
  );
  return given ? undefined : `${FLAG}=${HEAP_GROWING_PERCENT}`;
}

/**
 * Sets it for this process. V8 reads the flag each time it sets the next collection's limit,
 * so setting it at start, before the heap has grown, is enough.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  const flag = heapGrowthFlag(execArgv);
  if (flag !== undefined) setFlagsFromString(flag);
}
