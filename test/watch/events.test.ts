import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WatchEvents, type InputEvent, type WatchEvent } from '../../src/watch/events.js';
import { startWatch, waitFor, watchFixture } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

const fx = watchFixture('htorder-events-');

const phasesOf = (events: WatchEvent[], name: string): string[] =>
  events.filter((e): e is InputEvent => e.kind === 'input' && e.name === name).map((e) => e.phase);

describe('watch events (what notifications and the dashboard are told)', () => {
  it('tells waiting → processing → done for a good file and → failed, with its counts, for a bad one', async () => {
    const w = await startWatch({ target: fx.drop.path, flags: { stableTimeMs: 300 } }, fx.env);
    try {
      await writeFile(join(fx.drop.path, 'good.yaml'), manifest('G', 2));
      await writeFile(join(fx.drop.path, 'bad.yaml'), 'version: 1\njobs: [ {');
      await waitFor(async () => {
        const finished = [
          ...(await readdir(join(fx.drop.path, 'done'))),
          ...(await readdir(join(fx.drop.path, 'failed'))),
        ];
        return finished.includes('good.yaml') && finished.includes('bad.yaml') ? true : undefined;
      }, 'both inputs finished');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const events = w.events();
    expect(phasesOf(events, 'good.yaml')).toEqual(['waiting', 'processing', 'done']);
    expect(phasesOf(events, 'bad.yaml')).toEqual(['waiting', 'processing', 'failed']);
    const good = events.find((e): e is InputEvent => e.kind === 'input' && e.phase === 'done');
    expect(good?.location).toBe(join(fx.drop.path, 'done', 'good.yaml'));
    expect(good?.summary?.byStatus.submitted).toBe(2);
    expect(good?.durationMs).toBeGreaterThanOrEqual(0);
    const bad = events.find((e): e is InputEvent => e.kind === 'input' && e.phase === 'failed');
    expect(bad?.location).toBe(join(fx.drop.path, 'failed', 'bad.yaml'));
    expect(bad?.problem).toBeTruthy();
    // The API answered throughout: no availability change to report.
    expect(events.filter((e) => e.kind === 'api')).toEqual([]);
  });

  it('tells the API as unavailable while inputs wait to retry, and available again once one gets through', async () => {
    await fx.sandbox.admin.setFaults([{ route: '*', kind: 'status', status: 503 }]);
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    try {
      await writeFile(join(fx.drop.path, 'later.yaml'), manifest('L', 1));
      await waitFor(() => (phasesOf(w.events(), 'later.yaml').includes('retry') ? true : undefined), 'a retry');
      await fx.sandbox.admin.setFaults([]);
      await waitFor(() => (phasesOf(w.events(), 'later.yaml').includes('done') ? true : undefined), 'done');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const api = w.events().filter((e) => e.kind === 'api');
    expect(api.map((e) => e.available)).toEqual([false, true]);
    expect(phasesOf(w.events(), 'later.yaml').slice(-2)).toEqual(['processing', 'done']);
  });
});

describe('WatchEvents with several inputs in flight', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('does not flap: an input that began before the current state was seen proves nothing about it', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const events = new WatchEvents();
    const seen: boolean[] = [];
    events.on((e) => {
      if (e.kind === 'api') seen.push(e.available);
    });
    vi.setSystemTime(2_000_000);
    // Input A began at 1,500,000 and saw the outage (at 2,000,000).
    events.apiSeen(false, 'connect refused', 1_500_000);
    // Input B began at 1,600,000, before the outage was seen; its calls got through earlier.
    vi.setSystemTime(2_000_100);
    events.apiSeen(true, undefined, 1_600_000);
    expect(seen).toEqual([false]);
    // Input C began after the outage was seen, and got through: the API is back (at 3,000,000).
    vi.setSystemTime(3_000_000);
    events.apiSeen(true, undefined, 2_500_000);
    // Input D began during the outage and fails after the recovery: it changes nothing.
    vi.setSystemTime(3_000_100);
    events.apiSeen(false, 'connect refused', 2_400_000);
    expect(seen).toEqual([false, true]);
    // Without a start (one input at a time), every change counts, as before.
    events.apiSeen(false, 'connect refused');
    expect(seen).toEqual([false, true, false]);
  });
});
