import { describe, expect, it } from 'vitest';
import type { ClaimedInput } from '../../../src/watch/sources/model.js';
import { claimEach } from '../../../src/watch/sources/orphans.js';

/**
 * The orphan search's loop (src/watch/sources/orphans.ts) with a scripted clock: each claim
 * "takes" 400 ms of it, so a search of several claims outlasts a third of a 3 s lease. The
 * claims are stand-ins that record what was done with them (the sources' own searches run
 * against a real folder and bucket in claim-given-back.test.ts).
 */

interface Probe {
  input: ClaimedInput;
  log: string[];
}

function probe(name: string, t: () => number, log: string[], ours = true): Probe {
  const input = {
    name,
    renew: async () => {
      log.push(`renew ${name} at ${t()}`);
      return ours;
    },
    release: async () => void log.push(`release ${name}`),
    forget: async () => void log.push(`forget ${name}`),
  } as unknown as ClaimedInput;
  return { input, log };
}

describe('claimEach: an orphan search', () => {
  it('renews the claims it took while it goes on claiming, so none runs out before the watcher holds it', async () => {
    let t = 0;
    const log: string[] = [];
    const claimOne = async (name: string) => {
      t += 400;
      return probe(name, () => t, log).input;
    };
    const got = await claimEach(['a', 'b', 'c', 'd'], claimOne, { renewEveryMs: 1000, now: () => t });
    expect(got.map((c) => c.name)).toEqual(['a', 'b', 'c', 'd']);
    // By 1200 ms three were claimed and none renewed yet: those are renewed before the fourth.
    expect(log).toEqual(['renew a at 1200', 'renew b at 1200', 'renew c at 1200']);
  });

  it('drops a claim a renewal finds lost, and goes on', async () => {
    let t = 0;
    const log: string[] = [];
    const claimOne = async (name: string) => {
      t += 600;
      return probe(name, () => t, log, name !== 'a').input;
    };
    const got = await claimEach(['a', 'b', 'c'], claimOne, { renewEveryMs: 1000, now: () => t });
    // a and b renewed at 1200 (a found lost: dropped), then c.
    expect(got.map((c) => c.name)).toEqual(['b', 'c']);
    expect(log).toEqual(['renew a at 1200', 'renew b at 1200', 'forget a']);
  });

  it('gives back every claim it took when one fails', async () => {
    const log: string[] = [];
    const claimOne = async (name: string) => {
      if (name === 'c') throw new Error('the store failed');
      return probe(name, () => 0, log).input;
    };
    await expect(claimEach(['a', 'b', 'c', 'd'], claimOne, { renewEveryMs: 1000 })).rejects.toThrow('the store failed');
    expect(log).toEqual(['release a', 'release b']);
  });
});
