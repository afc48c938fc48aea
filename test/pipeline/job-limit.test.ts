import { describe, expect, it } from 'vitest';
import { jobLimit } from '../../src/pipeline/flow.js';

/** Runs `jobs` tasks through jobLimit(jobs, width); the most that were ever running at once. */
async function mostAtOnce(jobs: number, width: number): Promise<{ most: number; startedAtOnce: number }> {
  const limit = jobLimit(jobs, width);
  let running = 0;
  let most = 0;
  let started = 0;
  const gates: (() => void)[] = [];
  const all = Array.from({ length: jobs }, (_, i) =>
    limit(async () => {
      started++;
      most = Math.max(most, ++running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
      return i;
    }),
  );
  // Let every task that may start, start; then count them before any ends.
  for (let i = 0; i < 10; i++) await Promise.resolve();
  const startedAtOnce = started;
  while (gates.length > 0 || started < jobs) {
    gates.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(await Promise.all(all)).toEqual(Array.from({ length: jobs }, (_, i) => i));
  return { most, startedAtOnce };
}

describe('jobLimit', () => {
  it('runs no more than `width` of an input’s jobs at once when it has more', async () => {
    expect(await mostAtOnce(7, 2)).toEqual({ most: 2, startedAtOnce: 2 });
  });

  it('runs every job at once when there are no more than `width`', async () => {
    expect(await mostAtOnce(3, 3)).toEqual({ most: 3, startedAtOnce: 3 });
    expect(await mostAtOnce(1, 16)).toEqual({ most: 1, startedAtOnce: 1 });
  });
});
