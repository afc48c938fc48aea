import { describe, expect, it } from 'vitest';
import { eachJob } from '../../src/pipeline/flow.js';
import type { JobState } from '../../src/pipeline/job-state.js';
import type { StageContext } from '../../src/pipeline/stages/context.js';

const job = (index: number, outcome: 'checked' | 'refused' = 'checked'): JobState => ({
  index,
  orderNumber: `PO-${index}`,
  hash: 'h',
  outcome,
  diagnostics: [],
  unavailable: false,
});

/**
 * Runs eachJob over `count` jobs (every third one not selected) with a stage that waits on a
 * gate; the most that were ever in the stage at once, how many started before any ended, the
 * order the selected ones started in, and what was kept.
 */
async function run(count: number, width: number) {
  let running = 0;
  let most = 0;
  const order: number[] = [];
  const gates: (() => void)[] = [];
  const jobs: Array<JobState | undefined> = Array.from({ length: count }, (_, i) =>
    job(i, i % 3 === 2 ? 'refused' : 'checked'),
  );
  const all = eachJob(jobs, {
    select: (j) => j.outcome === 'checked',
    stage: async (j) => {
      order.push(j.index);
      most = Math.max(most, ++running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
      return { ...j, outcome: 'refused' };
    },
    ctx: {} as StageContext,
    width,
    keep: (j) => `${j.index}:${j.outcome}`,
  });
  // Let every job that may start, start; then count them before any ends.
  for (let i = 0; i < 10; i++) await Promise.resolve();
  const startedAtOnce = order.length;
  while (gates.length > 0 || running > 0) {
    gates.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const kept = await all;
  return { most, startedAtOnce, order, kept, left: jobs.filter((j) => j !== undefined).length };
}

describe('eachJob', () => {
  it('runs no more than `width` of an input’s jobs at once, in manifest order, and keeps each in its place', async () => {
    const r = await run(10, 2);
    expect(r.most).toBe(2);
    expect(r.startedAtOnce).toBe(2);
    expect(r.order).toEqual([0, 1, 3, 4, 6, 7, 9]);
    expect(r.kept).toEqual([
      '0:refused',
      '1:refused',
      '2:refused',
      '3:refused',
      '4:refused',
      '5:refused',
      '6:refused',
      '7:refused',
      '8:refused',
      '9:refused',
    ]);
  });

  it('runs every job at once when there are no more than `width`', async () => {
    expect((await run(3, 3)).startedAtOnce).toBe(2);
    expect((await run(1, 16)).most).toBe(1);
  });

  it('takes every job out of the array it was given', async () => {
    expect((await run(7, 2)).left).toBe(0);
  });
});
