import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Decision, type HandleResult, type SchedulerOptions, WatchScheduler } from '../../src/watch/scheduler.js';
import type { ListedInput } from '../../src/watch/sources/model.js';

/** The watch scheduler (src/watch/scheduler.ts) alone: scripted listings and results, a fake clock, no file system. */

interface Input {
  name: string;
}

const OPTS: SchedulerOptions = { stableMs: 0, needsStability: false };

const scheduler = (opts: Partial<SchedulerOptions> = {}) => new WatchScheduler<Input>({ ...OPTS, ...opts });
const file = (name: string, mtimeMs = 0, size = 1, marked = false): ListedInput => ({ name, size, mtimeMs, marked });
const kinds = (ds: readonly Decision<Input>[]) =>
  ds.map((d) => {
    if (d.kind === 'claim' || d.kind === 'waiting') return `${d.kind} ${d.name}`;
    if (d.kind === 'process' || d.kind === 'retry') return `${d.kind} ${d.held.input.name}`;
    return `${d.kind} ${d.input.name}`;
  });

/** Claims `name` (as the shell would after a `claim` decision) and returns what the scheduler holds. */
function claim(s: WatchScheduler<Input>, name: string, now: number) {
  const claimed = s.claimed(name, { name }, now);
  if (!claimed) throw new Error(`${name} not held`);
  return claimed.held;
}

describe('WatchScheduler: scanning', () => {
  it('scans at once, then at the interval, and sooner when asked unless ready inputs wait for a slot', () => {
    const s = scheduler();
    expect(s.scanNow(0)).toEqual({ orphans: true });
    expect(s.scanNow(10)).toBeUndefined();
    expect(s.wakeAt()).toBe(2000);
    s.ask();
    expect(s.scanNow(10)).toBeUndefined(); // never closer than 20 ms
    expect(s.wakeAt()).toBe(20);
    expect(s.scanNow(20)).toEqual({ orphans: false });
    s.listed([file('a.yaml'), file('b.yaml')], 20);
    expect(kinds(s.fill(20))).toEqual(['claim a.yaml', 'waiting b.yaml']);
    s.ask(); // our own claim's event: b.yaml is queued already
    expect(s.scanNow(100)).toBeUndefined();
    expect(s.wakeAt()).toBe(2020);
    expect(s.scanNow(2020)).toEqual({ orphans: false });
  });

  it('looks for orphans at the first scan and then every orphanScanEveryMs', () => {
    const s = scheduler({ scanIntervalMs: 10_000 });
    expect(s.scanNow(0)?.orphans).toBe(true);
    expect(s.scanNow(10_000)?.orphans).toBe(false);
    expect(s.scanNow(30_000)?.orphans).toBe(true);
  });

  it('counts failed scans until one succeeds; three in a row are failing health', () => {
    const s = scheduler();
    expect(s.scanFailed()).toBe(1);
    expect(s.scanFailed()).toBe(2);
    expect(s.health('here')).toMatchObject({ status: 'ok', location: 'here', lastScanAt: null });
    expect(s.scanFailed()).toBe(3);
    expect(s.health('here').status).toBe('failing');
    s.listed([], 5);
    expect(s.health('here')).toMatchObject({ status: 'ok', lastScanAt: new Date(5).toISOString() });
  });
});

describe('WatchScheduler: stability', () => {
  it('takes a file only once its size and mtime stood still for the stable time, scanning again exactly then', () => {
    const s = scheduler({ needsStability: true, stableMs: 2000 });
    s.scanNow(1000);
    expect(kinds(s.listed([file('a.yaml', 900, 10)], 1000))).toEqual(['waiting a.yaml']);
    expect(s.fill(1000)).toEqual([]);
    expect(s.wakeAt()).toBe(3000); // the settle time, before the interval
    expect(s.scanNow(2000)).toBeUndefined();
    s.scanNow(2500); // not due yet; the writer goes on meanwhile
    s.scanNow(3000);
    // Grown: it waits the whole stable time again, and is not announced twice.
    expect(s.listed([file('a.yaml', 2900, 20)], 3000)).toEqual([]);
    expect(s.fill(3000)).toEqual([]);
    expect(s.wakeAt()).toBe(5000);
    s.scanNow(5000);
    s.listed([file('a.yaml', 2900, 20)], 5000);
    expect(kinds(s.fill(5000))).toEqual(['claim a.yaml']);
  });

  it('takes a marked file at once', () => {
    const s = scheduler({ needsStability: true, stableMs: 2000 });
    s.listed([file('a.yaml', 900, 10, true)], 1000);
    expect(kinds(s.fill(1000))).toEqual(['claim a.yaml']);
  });

  it('watches a requeued name afresh: it must settle again', () => {
    const s = scheduler({ needsStability: true, stableMs: 2000 });
    s.listed([file('a.yaml', 0, 10, true)], 1000);
    s.fill(1000);
    const held = claim(s, 'a.yaml', 1000);
    expect(s.handled(held, 'requeued', 1500)).toBeUndefined();
    s.free('a.yaml');
    expect(s.health('')).toMatchObject({ inFlightInputs: [], waitingRetry: 0, processed: 0 });
    // Back at the top, still being written: not ready until stable.
    expect(kinds(s.listed([file('a.yaml', 1400, 12)], 1600))).toEqual(['waiting a.yaml']);
    expect(s.fill(1600)).toEqual([]);
    s.listed([file('a.yaml', 1400, 12)], 3600);
    expect(kinds(s.fill(3600))).toEqual(['claim a.yaml']);
  });
});

/**
 * A scheduler that only decides when files are complete: slots for all, scans far apart.
 * `look` is one scan: the names it finds ready, and when the next settling one is due.
 */
function settling(stableMs: number) {
  const s = scheduler({ needsStability: true, stableMs, parallel: 100, scanIntervalMs: 1e9 });
  s.scanNow(0);
  return {
    look(files: ListedInput[], now: number) {
      s.listed(files, now);
      const ready = kinds(s.fill(now))
        .filter((k) => k.startsWith('claim '))
        .map((k) => k.slice('claim '.length));
      const due = s.wakeAt();
      return { ready, nextDueAt: due >= 1e9 ? undefined : due };
    },
    /** Another instance took it: a file of that name is watched afresh. */
    forget(name: string, now: number) {
      s.claimed(name, undefined, now);
      s.free(name);
    },
  };
}

describe('WatchScheduler: when a file is complete', () => {
  const f = (size: number, mtimeMs: number, marked = false) => file('a.yaml', mtimeMs, size, marked);

  it('waits until size and mtime have not changed for the stable time', () => {
    const t = settling(100);
    expect(t.look([f(10, 1)], 0)).toEqual({ ready: [], nextDueAt: 100 });
    expect(t.look([f(20, 2)], 50).ready).toEqual([]); // still growing: the clock restarts
    expect(t.look([f(20, 2)], 120)).toEqual({ ready: [], nextDueAt: 150 });
    expect(t.look([f(20, 2)], 150).ready).toEqual(['a.yaml']);
  });

  it('takes a marked file at once', () => {
    expect(settling(10_000).look([f(10, 1, true)], 0).ready).toEqual(['a.yaml']);
  });

  it('watches a file afresh after it was taken by another instance or disappeared', () => {
    const t = settling(100);
    t.look([f(10, 1)], 0);
    t.look([], 50);
    expect(t.look([f(10, 1)], 100).ready).toEqual([]);
    t.forget('a.yaml', 120);
    expect(t.look([f(10, 1)], 150).ready).toEqual([]);
    expect(t.look([f(10, 1)], 250).ready).toEqual(['a.yaml']);
  });

  it('takes a file whose mtime is already the stable time old at the second look, a tenth of it later', () => {
    const t = settling(2000);
    const now = 1_000_000;
    expect(t.look([f(10, now - 60_000)], now)).toEqual({ ready: [], nextDueAt: now + 200 });
    expect(t.look([f(10, now - 60_000)], now + 100).ready).toEqual([]);
    expect(t.look([f(10, now - 60_000)], now + 200).ready).toEqual(['a.yaml']);
  });

  it('makes a file that changes between the two looks wait the whole stable time, whatever its mtime', () => {
    // A writer on a share whose clock runs behind ours: old-looking mtimes, but growing.
    const t = settling(2000);
    const now = 1_000_000;
    t.look([f(10, now - 60_000)], now);
    expect(t.look([f(20, now - 59_000)], now + 200)).toEqual({ ready: [], nextDueAt: now + 2200 });
    expect(t.look([f(20, now - 59_000)], now + 2100).ready).toEqual([]);
    expect(t.look([f(20, now - 59_000)], now + 2200).ready).toEqual(['a.yaml']);
  });

  it('makes a recent file (or one dated in the future) wait the whole stable time', () => {
    const now = 1_000_000;
    expect(settling(2000).look([f(10, now - 1999)], now).nextDueAt).toBe(now + 2000);
    expect(settling(2000).look([f(10, now + 60_000)], now).nextDueAt).toBe(now + 2000);
  });

  it('keeps the second look short but never longer than the stable time', () => {
    const now = 1_000_000;
    const secondLook = (stableMs: number) => settling(stableMs).look([f(10, 0)], now).nextDueAt ?? now;
    expect(secondLook(0) - now).toBe(0);
    expect(secondLook(30) - now).toBe(30);
    expect(secondLook(150) - now).toBe(50);
    expect(secondLook(60_000) - now).toBe(6000);
  });
});

describe('WatchScheduler: slots', () => {
  it('claims up to `parallel` inputs, oldest first, and takes the next one when a slot frees, without a scan', () => {
    const s = scheduler({ parallel: 2 });
    s.listed([file('c.yaml', 3), file('a.yaml', 1), file('b.yaml', 1), file('d.yaml', 4)], 10);
    expect(kinds(s.fill(10))).toEqual(['claim a.yaml', 'claim b.yaml', 'waiting c.yaml', 'waiting d.yaml']);
    expect(s.health('').queued).toBe(2);
    expect(s.fill(11)).toEqual([]); // full, and c and d were announced already
    const a = claim(s, 'a.yaml', 50);
    expect(s.health('').inFlightInputs).toEqual(['a.yaml']);
    expect(s.claimed('b.yaml', undefined, 50)).toBeUndefined(); // another instance had it
    s.free('b.yaml');
    expect(kinds(s.fill(60))).toEqual(['claim c.yaml']); // d.yaml was announced already
    expect(s.handled(a, 'done', 70)).toBeUndefined();
    s.free('a.yaml');
    expect(kinds(s.fill(70))).toEqual(['claim d.yaml']);
    expect(s.health('')).toMatchObject({ processed: 1, queued: 0 });
  });

  it('reports the wait from ready to claimed', () => {
    const s = scheduler();
    s.listed([file('a.yaml')], 100);
    s.fill(100);
    expect(s.claimed('a.yaml', { name: 'a.yaml' }, 350)?.waitedMs).toBe(250);
  });

  it('never claims a name it holds or is claiming: an earlier input of that name goes first', () => {
    const s = scheduler({ parallel: 3 });
    s.listed([file('a.yaml')], 0);
    expect(kinds(s.fill(0))).toEqual(['claim a.yaml']);
    s.listed([file('a.yaml')], 10); // listed again while its claim is under way
    expect(s.fill(10)).toEqual([]);
    const a = claim(s, 'a.yaml', 20);
    s.handled(a, 'retry', 30);
    s.free('a.yaml');
    s.listed([file('a.yaml')], 40); // a new file of the same name, the old one waiting to retry
    expect(s.fill(40)).toEqual([]);
  });

  it('logs a claim error once per name and message, and again once the name came back', () => {
    const s = scheduler();
    s.listed([file('a.yaml')], 0);
    expect(s.claimFailed('a.yaml', 'EACCES')).toBe(true);
    expect(s.claimFailed('a.yaml', 'EACCES')).toBe(false);
    expect(s.claimFailed('a.yaml', 'EIO')).toBe(true);
    expect(s.claimFailed('a.yaml', 'EIO')).toBe(false);
    s.listed([], 1);
    s.listed([file('a.yaml')], 2);
    expect(s.claimFailed('a.yaml', 'EIO')).toBe(true);
  });
});

describe('WatchScheduler: retries', () => {
  it('keeps an input claimed and retries it with the one backoff (equal jitter), bounded by retry max', () => {
    for (const random of [0, 0.999]) {
      const s = scheduler({ retryMinMs: 200, retryMaxMs: 400, random: () => random });
      s.scanNow(0); // the next scan is 2 s away: the retries come first
      s.listed([file('a.yaml')], 0);
      s.fill(0);
      const a = claim(s, 'a.yaml', 0);
      let now = 0;
      for (const step of [200, 400, 400, 400]) {
        const d = s.handled(a, 'retry', now);
        if (d?.kind !== 'retry') throw new Error(`expected a retry, got ${d?.kind}`);
        expect(d.delayMs).toBeGreaterThanOrEqual(step / 2);
        expect(d.delayMs).toBeLessThanOrEqual(step);
        expect(d.held.attempts).toBeGreaterThan(0);
        s.free('a.yaml');
        expect(s.health('')).toMatchObject({ inFlightInputs: [], waitingRetry: 1 });
        expect(s.wakeAt()).toBe(now + d.delayMs);
        expect(s.fill(now + d.delayMs - 1)).toEqual([]);
        now += d.delayMs;
        expect(kinds(s.fill(now))).toEqual(['process a.yaml']);
      }
      expect(a.attempts).toBe(4);
    }
  });

  it('spreads the retries of many inputs (the jitter), each within its step', () => {
    const s = scheduler({ parallel: 50, retryMinMs: 1000, retryMaxMs: 1000 });
    const names = Array.from({ length: 50 }, (_, i) => `f${i}.yaml`);
    s.listed(
      names.map((n) => file(n)),
      0,
    );
    s.fill(0);
    const delays = names.map((n) => {
      const d = s.handled(claim(s, n, 0), 'retry', 0);
      return d?.kind === 'retry' ? d.delayMs : -1;
    });
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(500);
    for (const d of delays) expect(d).toBeLessThanOrEqual(1000);
    expect(new Set(delays).size).toBeGreaterThan(10);
  });

  it('takes an input due for a retry before the queue', () => {
    const s = scheduler({ random: () => 0 });
    s.listed([file('a.yaml')], 0);
    s.fill(0);
    const a = claim(s, 'a.yaml', 0);
    expect(s.handled(a, 'retry', 0)).toMatchObject({ kind: 'retry', delayMs: 2500 });
    s.free('a.yaml');
    s.listed([file('b.yaml')], 3000);
    expect(kinds(s.fill(3000))).toEqual(['process a.yaml', 'waiting b.yaml']);
  });
});

describe('WatchScheduler: claims lost', () => {
  it('drops an input whose claim was lost while processed, whatever handle() returned', () => {
    const s = scheduler();
    s.listed([file('a.yaml')], 0);
    s.fill(0);
    const a = claim(s, 'a.yaml', 0);
    expect(s.renewals()).toEqual([a]);
    expect(s.markLost(a)).toBe(true);
    expect(s.markLost(a)).toBe(false); // said once
    expect(s.renewals()).toEqual([]);
    expect(kinds([s.handled(a, 'retry', 10)!])).toEqual(['lost a.yaml']);
    expect(s.health('')).toMatchObject({ waitingRetry: 0, processed: 0 });
  });

  it('drops an input lost while it waited for its retry, at the next fill', () => {
    const s = scheduler();
    s.listed([file('a.yaml')], 0);
    s.fill(0);
    const a = claim(s, 'a.yaml', 0);
    s.handled(a, 'retry', 0);
    s.free('a.yaml');
    s.markLost(a);
    expect(kinds(s.fill(1))).toEqual(['lost a.yaml']);
    expect(s.drain()).toEqual([]);
  });

  it('a renewal of an earlier input of the same name cannot mark the new one lost', () => {
    const s = scheduler();
    s.listed([file('a.yaml')], 0);
    s.fill(0);
    const first = claim(s, 'a.yaml', 0);
    s.handled(first, 'done', 10);
    s.free('a.yaml');
    s.listed([file('a.yaml')], 20);
    s.fill(20);
    const second = claim(s, 'a.yaml', 20);
    s.markLost(first); // its renewal answered late
    expect(second.lost).toBe(false);
    expect(s.handled(second, 'done', 30)).toBeUndefined();
  });

  it('handle() saying lost drops it too', () => {
    const s = scheduler();
    s.listed([file('a.yaml')], 0);
    s.fill(0);
    expect(kinds([s.handled(claim(s, 'a.yaml', 0), 'lost', 10)!])).toEqual(['lost a.yaml']);
  });
});

describe('WatchScheduler: orphans and stopping', () => {
  it('holds the inputs of crashed instances due at once and processes them before new ones', () => {
    const s = scheduler();
    expect(s.resume({ name: 'o.yaml' })).toBe('resumed');
    // Held already (its claim here lost, not yet dropped): the new claim is given back, not kept unrenewed.
    expect(s.resume({ name: 'o.yaml' })).toBe('release');
    s.listed([file('a.yaml')], 0);
    expect(kinds(s.fill(0))).toEqual(['process o.yaml', 'waiting a.yaml']);
    expect(s.health('').inFlightInputs).toEqual(['o.yaml']);
  });

  it('gives back a new claim on an input whose claim here was lost and is not yet dropped', () => {
    const s = scheduler({ parallel: 2 });
    s.listed([file('a.yaml'), file('b.yaml')], 0);
    s.fill(0);
    const a = claim(s, 'a.yaml', 0);
    const b = claim(s, 'b.yaml', 0);
    s.handled(b, 'retry', 1);
    s.free('b.yaml');
    // Both lost (a in its slot, b waiting for its retry); the orphan search claims them again
    // before the loop dropped them: neither new claim is kept (nor left unreleased).
    s.markLost(a);
    s.markLost(b);
    expect(s.resume({ name: 'a.yaml' })).toBe('release');
    expect(s.resume({ name: 'b.yaml' })).toBe('release');
    expect(kinds(s.fill(2))).toEqual(['lost b.yaml']);
    expect(kinds([s.handled(a, 'done', 3)!])).toEqual(['lost a.yaml']);
    s.free('a.yaml');
    // Dropped: the next search's claim is resumed.
    expect(s.resume({ name: 'a.yaml' })).toBe('resumed');
  });

  it('once stopping: takes nothing new, finishes what is in flight, releases retries and what waits', () => {
    const s = scheduler({ parallel: 2 });
    s.listed([file('a.yaml'), file('b.yaml'), file('c.yaml')], 0);
    s.fill(0);
    const a = claim(s, 'a.yaml', 0);
    s.stop();
    expect(s.stopping).toBe(true);
    expect(s.resume({ name: 'o.yaml' })).toBe('release');
    // A claim under way when the stop came is in flight now: it is processed.
    const b = claim(s, 'b.yaml', 1);
    expect(s.fill(2).filter((d) => d.kind === 'claim' || d.kind === 'process')).toEqual([]);
    expect(kinds([s.handled(a, 'retry', 3)!])).toEqual(['release a.yaml']);
    s.free('a.yaml');
    expect(s.handled(b, 'failed', 4)).toBeUndefined();
    s.free('b.yaml');
    expect(s.health('')).toMatchObject({ status: 'stopping', processed: 1, inFlightInputs: [] });
  });

  it('drains: every input still held is released, except those lost', () => {
    const s = scheduler({ parallel: 3, random: () => 0 });
    s.listed([file('a.yaml'), file('b.yaml'), file('c.yaml')], 0);
    s.fill(0);
    const [a, b, c] = ['a.yaml', 'b.yaml', 'c.yaml'].map((n) => claim(s, n, 0));
    for (const h of [a!, b!, c!]) {
      s.handled(h, 'retry', 0);
      s.free(h.input.name);
    }
    s.markLost(b!);
    s.stop();
    expect(s.drain().map((i) => i.name)).toEqual(['a.yaml', 'c.yaml']);
    expect(s.health('').waitingRetry).toBe(0);
  });
});

describe('WatchScheduler: invariants over any script', () => {
  type Step =
    | { t: 'scan'; files: number[] }
    | { t: 'claim'; ok: boolean }
    | { t: 'handle'; result: HandleResult }
    | { t: 'lose' }
    | { t: 'tick'; ms: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ t: fc.constant('scan' as const), files: fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 6 }) }),
    fc.record({ t: fc.constant('claim' as const), ok: fc.boolean() }),
    fc.record({
      t: fc.constant('handle' as const),
      result: fc.constantFrom<HandleResult>('done', 'failed', 'retry', 'lost', 'requeued'),
    }),
    fc.record({ t: fc.constant('lose' as const) }),
    fc.record({ t: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 400 }) }),
  );

  it('never exceeds the slots, never holds a name twice, and every claim ends finished, released or lost', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(step, { maxLength: 60 }), (parallel, steps) => {
        const s = scheduler({ parallel, retryMinMs: 100, retryMaxMs: 400 });
        let now = 0;
        const claiming: string[] = [];
        const processing: ReturnType<typeof claim>[] = [];
        const open = new Set<string>(); // claimed and not yet ended
        let ended = 0;
        let claims = 0;
        const take = (ds: Decision<Input>[]) => {
          for (const d of ds) {
            if (d.kind === 'claim') claiming.push(d.name);
            if (d.kind === 'process') processing.push(d.held);
            if (d.kind === 'lost' || d.kind === 'release') {
              expect(open.delete(d.input.name)).toBe(true);
              ended += 1;
            }
          }
          expect(claiming.length + processing.length).toBeLessThanOrEqual(parallel);
        };
        for (const st of steps) {
          if (st.t === 'scan')
            s.listed(
              [...new Set(st.files)].map((i) => file(`f${i}.yaml`, i)),
              now,
            );
          else if (st.t === 'claim' && claiming.length > 0) {
            const name = claiming.shift() as string;
            const got = s.claimed(name, st.ok ? { name } : undefined, now);
            if (got) {
              expect(open.has(name)).toBe(false);
              open.add(name);
              claims += 1;
              processing.push(got.held);
            } else s.free(name);
          } else if (st.t === 'handle' && processing.length > 0) {
            const held = processing.shift() as ReturnType<typeof claim>;
            const d = s.handled(held, st.result, now);
            if (d) take([d]);
            else {
              expect(open.delete(held.input.name)).toBe(true);
              ended += 1;
            }
            s.free(held.input.name);
          } else if (st.t === 'lose') {
            const first = s.renewals()[0];
            if (first) s.markLost(first);
          } else if (st.t === 'tick') now += st.ms;
          take(s.fill(now));
        }
        // Stop and let everything in flight end.
        s.stop();
        for (const name of claiming) s.free(name);
        for (const held of processing) {
          const d = s.handled(held, 'done', now);
          if (d) take([d]);
          else {
            open.delete(held.input.name);
            ended += 1;
          }
          s.free(held.input.name);
        }
        take(s.fill(now));
        for (const input of s.drain()) {
          expect(open.delete(input.name)).toBe(true);
          ended += 1;
        }
        expect(open.size).toBe(0);
        expect(ended).toBe(claims);
      }),
    );
  });
});
