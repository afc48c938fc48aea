import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { OpenPipeline } from '../../src/app/pipeline-context.js';
import { keepLedgersUp } from '../../src/app/watch-daemon.js';
import type { WatchRoutes } from '../../src/app/watch-routes.js';

/** A watcher looks at its ledgers' upkeep a while after its start, then regularly, each account's, one at a time. */
describe('keepLedgersUp', () => {
  it("calls each pipeline's upkeep with the routes' longest window, one look at a time, and stop waits for one under way", async () => {
    const calls: [string, number | undefined][] = [];
    let running = 0;
    let most = 0;
    const pipeline = (name: string) =>
      ({
        upkeep: async (windowMs?: number) => {
          running++;
          most = Math.max(most, running);
          calls.push([name, windowMs]);
          await sleep(30);
          running--;
        },
      }) as unknown as OpenPipeline;
    const routes = { routes: [{ duplicateWindowMs: 3_600_000 }, {}, { duplicateWindowMs: 7 * 86_400_000 }] };
    const upkeep = keepLedgersUp(
      [pipeline('own'), pipeline('other')],
      { routes: routes as unknown as WatchRoutes },
      {
        firstMs: 20,
        everyMs: 10,
      },
    );
    expect(calls).toEqual([]);
    await sleep(150);
    await upkeep.stop();
    const settled = calls.length;
    expect(settled).toBeGreaterThanOrEqual(4);
    expect(new Set(calls.map(([, w]) => w))).toEqual(new Set([7 * 86_400_000]));
    expect(calls.filter(([n]) => n === 'own').length).toBe(calls.filter(([n]) => n === 'other').length);
    // Each look waits for the one before it.
    expect(most).toBeLessThanOrEqual(2);
    expect(running).toBe(0);
    await sleep(50);
    expect(calls).toHaveLength(settled);
  });
});
