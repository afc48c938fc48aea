import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { InputEvent, WatchEvent } from '../../../src/watch/events.js';
import { startLoopback } from '../../support/loopback-server.js';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

/** Several files in flight per watcher (issue 15): bounded, one budget of API requests, all promises kept. */

const fx = watchFixture('htorder-parallel-');

const ls = async (sub = ''): Promise<string[]> => (await readdir(join(fx.drop.path, sub)).catch(() => [])).sort();
const inputsIn = async (sub: string): Promise<string[]> => (await ls(sub)).filter((n) => n.endsWith('.yaml'));
const jobsOf = async (): Promise<string[]> => (await fx.sandbox.admin.jobs()).map((j) => j.orderNumber ?? '?').sort();
const orders = (prefix: string, files: number, jobs: number): string[] =>
  Array.from({ length: files }, (_, f) => Array.from({ length: jobs }, (_, j) => `${prefix}${f}-${j + 1}`))
    .flat()
    .sort();
const drops = async (prefix: string, files: number, jobs = 1): Promise<void> => {
  for (let f = 0; f < files; f++)
    await writeFile(join(fx.drop.path, `${prefix}${f}.yaml`), manifest(`${prefix}${f}`, jobs));
};
const allDone = (n: number) => async () => ((await inputsIn('done')).length === n ? true : undefined);

/** The most inputs between `processing` and their end at any moment, from the event feed. */
function mostInFlight(events: WatchEvent[]): number {
  let now = 0;
  let most = 0;
  for (const e of events) {
    if (e.kind !== 'input') continue;
    if (e.phase === 'processing') now += 1;
    else if (e.phase !== 'waiting') now -= 1;
    most = Math.max(most, now);
  }
  return most;
}

const phasesOf = (events: WatchEvent[], name: string): string[] =>
  events.filter((e): e is InputEvent => e.kind === 'input' && e.name === name).map((e) => e.phase);

describe('htorder watch with several files in flight', () => {
  it('works on --parallel-files inputs at once, no more, and shows them in /healthz and the gauge', async () => {
    // Slow creates keep the first inputs in flight while the others are ready.
    await fx.sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'latency', latencyMs: 400 }]);
    const w = await startWatch({ target: fx.drop.path, flags: { watchParallelFiles: 3, healthPort: 0 } }, fx.env);
    try {
      await drops('P', 7);
      const health = await waitFor(async () => {
        const h = (await (await fetch(`${w.healthUrl}/healthz`)).json()) as Record<string, unknown>;
        return h.inFlight === 3 ? h : undefined;
      }, 'three inputs in flight');
      expect(health).toMatchObject({ status: 'ok', parallel: 3 });
      expect((health.inFlightInputs as string[]).length).toBe(3);
      expect(await (await fetch(`${w.healthUrl}/metrics`)).text()).toMatch(/htorder_watch_files_in_flight 3/);
      await waitFor(allDone(7), '7 inputs in done/');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect(mostInFlight(w.events())).toBe(3);
    expect(await jobsOf()).toEqual(orders('P', 7, 1));
    // Queued inputs (ready, no free slot) are announced as waiting, then processed, once each.
    for (let f = 0; f < 7; f++) expect(phasesOf(w.events(), `P${f}.yaml`)).toEqual(['waiting', 'processing', 'done']);
  });

  it('all inputs in flight share one budget: the API never sees more than HTORDER_CONCURRENCY requests', async () => {
    // A counting proxy in front of the sandbox's API (the token endpoint is not behind it).
    let inFlight = 0;
    let most = 0;
    const upstream = new URL(fx.env.HTORDER_BASE_URL!);
    const proxy = await startLoopback(async (req, res) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      try {
        const answer = await fetch(`${upstream.origin}${req.url}`, {
          method: req.method,
          headers: Object.fromEntries(
            ['authorization', 'content-type', 'accept', 'x-application-name']
              .filter((h) => req.headers[h] !== undefined)
              .map((h) => [h, String(req.headers[h])]),
          ),
          body: req.body === '' ? undefined : req.body,
        });
        const body = Buffer.from(await answer.arrayBuffer());
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(body);
      } finally {
        inFlight -= 1;
      }
    });
    await fx.sandbox.admin.setFaults([{ route: '*', kind: 'latency', latencyMs: 30 }]);
    const viaProxy = { ...fx.env, HTORDER_BASE_URL: `${proxy.url}${upstream.pathname}`, HTORDER_CONCURRENCY: '2' };
    const w = await startWatch({ target: fx.drop.path, flags: { watchParallelFiles: 6 } }, viaProxy);
    try {
      await drops('B', 6, 3);
      await waitFor(allDone(6), '6 inputs in done/');
    } finally {
      expect(await w.stop()).toBe(0);
      await proxy.close();
    }
    expect(mostInFlight(w.events())).toBeGreaterThan(1);
    expect(most).toBe(2);
    expect(await jobsOf()).toEqual(orders('B', 6, 3));
  });

  it('files of one account share their lookups: one GET /account, one per asset, however many start together', async () => {
    const w = await startWatch({ target: fx.drop.path, flags: { watchParallelFiles: 8 } }, fx.env);
    try {
      await drops('L', 8);
      await waitFor(allDone(8), '8 inputs in done/');
    } finally {
      await w.stop();
    }
    expect(mostInFlight(w.events())).toBeGreaterThan(1);
    const calls = await fx.sandbox.admin.calls();
    expect(calls['GET /account']).toBe(1);
    expect(calls['GET /Assets/{assetTag}']).toBe(1);
    expect(calls['GET /Lookups/countries/{iso2}/states'] ?? 0).toBeLessThanOrEqual(1);
    expect(calls['POST /Jobs']).toBe(16); // a dry run and a create per order, nothing more
  });

  it('on SIGTERM finishes every input in flight, takes no new one, and leaves nothing in processing/', async () => {
    await fx.sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'latency', latencyMs: 500 }]);
    const w = await startWatch({ target: fx.drop.path, flags: { watchParallelFiles: 3 } }, fx.env);
    await drops('S', 5);
    await waitFor(() => (mostInFlight(w.events()) === 3 ? true : undefined), 'three inputs in flight at once');
    expect(await w.stop()).toBe(0);
    const done = await inputsIn('done');
    expect(done).toHaveLength(3);
    expect(await inputsIn('processing')).toEqual([]);
    expect(await inputsIn('')).toHaveLength(2);
    expect([...done, ...(await inputsIn(''))].sort()).toEqual(['S0.yaml', 'S1.yaml', 'S2.yaml', 'S3.yaml', 'S4.yaml']);
    const finished = done.map((n) => n.replace('.yaml', ''));
    expect(await jobsOf()).toEqual(finished.map((f) => `${f}-1`).sort());
  });

  it('retries each input on its own backoff while the API is down, and the API is reported down once, back once', async () => {
    await fx.sandbox.admin.setFaults([{ route: '*', kind: 'status', status: 503 }]);
    const w = await startWatch({ target: fx.drop.path, flags: { watchParallelFiles: 3, healthPort: 0 } }, fx.env);
    try {
      await drops('R', 3, 2);
      await waitFor(
        () =>
          ['R0.yaml', 'R1.yaml', 'R2.yaml'].every((n) => phasesOf(w.events(), n).includes('retry')) ? true : undefined,
        'each input waiting for its retry',
      );
      expect(await inputsIn('processing')).toEqual(['R0.yaml', 'R1.yaml', 'R2.yaml']);
      expect(await inputsIn('failed')).toEqual([]);
      await fx.sandbox.admin.clearFaults();
      await waitFor(allDone(3), '3 inputs in done/');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect(await jobsOf()).toEqual(orders('R', 3, 2));
    const api = w.events().filter((e) => e.kind === 'api');
    expect(api.map((e) => e.available)).toEqual([false, true]);
  });

  it('resumes inputs left in processing/ by a crashed instance first, each once, alongside new ones', async () => {
    await mkdir(join(fx.drop.path, 'processing'), { recursive: true });
    // A crash leaves inputs in processing/ without a live claim.
    for (let f = 0; f < 3; f++) await writeFile(join(fx.drop.path, 'processing', `O${f}.yaml`), manifest(`O${f}`, 2));
    await drops('N', 3, 2);
    const w = await startWatch({ target: fx.drop.path, flags: { watchParallelFiles: 2 } }, fx.env);
    try {
      await waitFor(allDone(6), '6 inputs in done/');
    } finally {
      await w.stop();
    }
    expect(w.logs().filter((l) => String(l.msg).startsWith('resuming'))).toHaveLength(3);
    expect(await jobsOf()).toEqual([...orders('O', 3, 2), ...orders('N', 3, 2)].sort());
    expect(await ls('done')).not.toContain(expect.stringMatching(/\d{8}T/));
    // Resumed before anything new was claimed.
    const started = w.events().filter((e): e is InputEvent => e.kind === 'input' && e.phase === 'processing');
    expect(
      started
        .slice(0, 3)
        .map((e) => e.name)
        .sort(),
    ).toEqual(['O0.yaml', 'O1.yaml', 'O2.yaml']);
  });

  it('takes files that were already complete when it started without waiting the stable time', async () => {
    // Ten seconds of stable time: only a file found already quiet (a backlog) can be taken now.
    await writeBacklog();
    const w = await startWatch({ target: fx.drop.path, flags: { stableTimeMs: 10_000 } }, fx.env);
    try {
      await waitFor(allDone(2), 'the two old files in done/');
      await sleep(300); // several scans: the fresh file is still settling
      expect(await inputsIn('')).toEqual(['fresh.yaml']);
    } finally {
      await w.stop();
    }
    expect((await jobsOf()).sort()).toEqual(['OLD0-1', 'OLD1-1']);
  });
});

/** Two files whose mtime is an hour old (left while no watcher ran) and one just written. */
async function writeBacklog(): Promise<void> {
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (let f = 0; f < 2; f++) {
    const path = join(fx.drop.path, `old${f}.yaml`);
    await writeFile(path, manifest(`OLD${f}`));
    await utimes(path, hourAgo, hourAgo);
  }
  await writeFile(join(fx.drop.path, 'fresh.yaml'), manifest('FRESH'));
}
