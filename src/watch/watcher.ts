import type { Logger } from '../core/log/logger.js';
import type { WatchEvents } from './events.js';
import type { WatchMetrics } from './metrics.js';
import type { HealthState } from './health-server.js';
import type { ClaimedInput, DropSource } from './sources/model.js';
import { StabilityTracker } from './sources/stability.js';

/**
 * What became of one claimed input: finished (done/failed), to be retried later, lost to
 * another instance, or given back to its source because it changed while processed
 * (`requeued`: claim dropped, handle() told the events; taken again once complete).
 */
export type HandleResult = 'done' | 'failed' | 'retry' | 'lost' | 'requeued';

export interface WatcherOptions {
  source: DropSource;
  /** Processes one claimed input to the end (the CLI composes handleInput with the pipeline). */
  handle: (input: ClaimedInput, lease: { lost: () => boolean }) => Promise<HandleResult>;
  logger: Logger;
  /** The periodic scan is the source of truth; default 2000 ms. */
  scanIntervalMs?: number;
  /** Size and mtime unchanged this long means complete (folders); default 2000 ms. */
  stableMs?: number;
  /** Backoff for inputs whose API or store was unavailable: doubles from min to max. Default 5 s … 5 min. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** How often claims are renewed (a third of the source's lease). Default 10 s. */
  renewEveryMs?: number;
  /** How often processing/ is searched for inputs of crashed instances (besides at start). Default 30 s. */
  orphanScanEveryMs?: number;
  metrics?: WatchMetrics;
  /** Told where each input is in its life (waiting, processing, retry, lost); handle() tells done/failed. */
  events?: WatchEvents;
  /** Subscribes to early wake-ups (file-system events); returns the unsubscribe. */
  wakeOn?: (wake: () => void) => () => void | Promise<void>;
  /**
   * Inputs worked on at once (claimed and handled); default 1. However many there are, their
   * API calls share one client, whose limit of requests in flight is the one budget.
   */
  parallel?: number;
}

export interface Watcher {
  /** Stop taking new inputs, finish every one in flight, release the ones waiting; resolves when done. */
  stop(): Promise<void>;
  /** Resolves when the loop has ended (after stop(), or a fatal error: then it rejects). */
  readonly finished: Promise<void>;
  /** Scan now instead of at the next interval. */
  wake(): void;
  health(): HealthState;
}

interface Waiting {
  input: ClaimedInput;
  attempts: number;
  dueAt: number;
  lost: boolean;
}

/**
 * The daemon loop of `htorder watch`: scan → wait until stable → claim → handle, up to
 * `parallel` inputs at once (and each input's jobs concurrently, in the pipeline), all of them
 * sharing the client's one budget of API requests. A scan queues the inputs that are ready,
 * oldest first; a slot that frees takes the next one from that queue without scanning again,
 * so per-input work (claim, copy, reports, moves) overlaps other inputs' API calls. Inputs
 * whose API was unavailable keep their claim and are retried with a backoff of their own; at
 * start and then every so often, inputs abandoned in processing/ by crashed instances are
 * resumed.
 */
export function startWatcher(opts: WatcherOptions): Watcher {
  const { source, logger } = opts;
  const scanIntervalMs = opts.scanIntervalMs ?? 2000;
  const tracker = new StabilityTracker(opts.stableMs ?? 2000);
  const retryMinMs = opts.retryMinMs ?? 5000;
  const retryMaxMs = opts.retryMaxMs ?? 300_000;
  const orphanEvery = opts.orphanScanEveryMs ?? 30_000;
  const parallel = Math.max(1, Math.floor(opts.parallel ?? 1));
  const metrics = opts.metrics;
  /** Every input this instance holds a claim on: being handled, or waiting for its retry. */
  const held = new Map<string, Waiting>();
  /** The slots: names being claimed or handled now, and the task doing it. */
  const slots = new Map<string, Promise<void>>();
  /** Names being handled now (claimed; handle() running), for health and the in-flight gauge. */
  const handling = new Set<string>();
  /** Ready names of the last scan, oldest first, not yet taken: the next free slot takes the first. */
  let queue: string[] = [];
  const readySince = new Map<string, number>();
  /** The last claim error of each name, so a file that cannot be claimed is not logged every scan. */
  const claimErrors = new Map<string, string>();
  /** Names already announced as waiting, so each is announced once while it settles or waits for a slot. */
  const announced = new Set<string>();
  let stopping = false;
  /** A scan was asked for (file-system events, wake()). */
  let scanAsked = false;
  let wakeSleeper: (() => void) | undefined;
  let lastScanAt: number | undefined;
  let lastScanStart = 0;
  let nextScanAt = 0;
  /** When the next file waiting to settle will be stable: scan again then. */
  let settleDueAt: number | undefined;
  let scanFailures = 0;
  let processed = 0;
  let nextOrphanScan = 0;

  const nudge = (): void => wakeSleeper?.();
  const wake = (): void => {
    scanAsked = true;
    nudge();
  };
  const unsubscribe = opts.wakeOn?.(wake);

  const renewTimer = setInterval(() => {
    for (const w of held.values()) {
      if (w.lost) continue;
      w.input.renew().then(
        (ok) => {
          if (!ok && !w.lost) {
            w.lost = true;
            logger.warn({ file: w.input.location }, 'claim lost: another instance took this input over');
          }
        },
        (err: unknown) =>
          logger.warn({ file: w.input.location, err: (err as Error).message }, 'could not renew the claim'),
      );
    }
  }, opts.renewEveryMs ?? 10_000);
  renewTimer.unref();

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (stopping) return resolve();
      const t = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(t);
        wakeSleeper = undefined;
        resolve();
      }
      wakeSleeper = done;
    });

  const gauges = (): void => {
    metrics?.inFlight.set(handling.size);
    metrics?.waiting.set(held.size - handling.size);
  };

  const run = async (w: Waiting): Promise<void> => {
    const { input } = w;
    handling.add(input.name);
    gauges();
    opts.events?.input({ name: input.name, location: input.location, phase: 'processing' });
    let result: HandleResult;
    try {
      result = await opts.handle(input, { lost: () => w.lost });
    } catch (err) {
      // handle() turns every expected problem into a result; this is the store failing
      // mid-move: keep the claim and try again later rather than lose the input.
      logger.error({ file: input.location, err: (err as Error).message }, 'input could not be finished; will retry');
      result = 'retry';
    } finally {
      handling.delete(input.name);
    }
    if (result === 'retry' && !w.lost && !stopping) {
      w.attempts += 1;
      const delay = Math.min(retryMaxMs, retryMinMs * 2 ** (w.attempts - 1));
      w.dueAt = Date.now() + delay;
      logger.warn(
        { file: input.location, retryInMs: delay, attempts: w.attempts },
        'API or store unavailable: input kept in processing, will retry',
      );
      opts.events?.input({
        name: input.name,
        location: input.location,
        phase: 'retry',
        retryInMs: delay,
        problem: 'the API or the store was unavailable',
      });
      held.set(input.name, w);
    } else {
      held.delete(input.name);
      if (result === 'retry' && !w.lost) await input.release().catch(() => undefined);
      if (result === 'lost' || w.lost) {
        // No longer ours: its private copy goes now, not when the watcher closes.
        await input.forget().catch(() => undefined);
        opts.events?.input({ name: input.name, location: input.location, phase: 'lost' });
      }
      if (result === 'done' || result === 'failed') processed += 1;
    }
    metrics?.files.inc({ outcome: result });
    gauges();
  };

  const claimAndRun = async (name: string): Promise<void> => {
    let input: ClaimedInput | undefined;
    try {
      input = await source.claim(name);
    } catch (err) {
      // One entry that cannot be claimed (a name the file system refuses, a file that
      // vanished half-way) must not stop the others: later files are still taken.
      // Logged once per name and error, not at every scan.
      const message = (err as Error).message;
      if (claimErrors.get(name) !== message) {
        claimErrors.set(name, message);
        logger.error({ name, err: message }, 'could not claim this input; will try again at each scan');
      }
      return;
    }
    claimErrors.delete(name);
    announced.delete(name);
    tracker.forget(name);
    const since = readySince.get(name);
    readySince.delete(name);
    if (!input) return; // another instance has it
    if (since !== undefined) metrics?.pickupDelay.observe((Date.now() - since) / 1000);
    logger.info({ file: input.location }, 'claimed input');
    // Claimed: from here on it is in flight, so a stop that came meanwhile still finishes it.
    const w: Waiting = { input, attempts: 0, dueAt: 0, lost: false };
    held.set(input.name, w);
    await run(w);
  };

  /** Runs `task` in a slot named `name`; the slot frees (and the loop looks for more work) when it ends. */
  const occupy = (name: string, task: () => Promise<void>): void => {
    const p = task()
      .catch((err: unknown) => logger.error({ name, err: (err as Error).message }, 'input could not be handled'))
      .finally(() => {
        slots.delete(name);
        nudge();
      });
    slots.set(name, p);
  };

  /** Fills free slots: inputs due for a retry first (claimed earlier), then the queue, oldest first. */
  const fill = (): void => {
    const now = Date.now();
    for (const w of [...held.values()]) {
      if (w.lost && !slots.has(w.input.name)) {
        held.delete(w.input.name);
        w.input.forget().catch(() => undefined);
      }
    }
    while (!stopping && slots.size < parallel) {
      const due = [...held.values()].find((w) => !slots.has(w.input.name) && w.dueAt <= now);
      if (due) {
        occupy(due.input.name, () => run(due));
        continue;
      }
      const name = queue.shift();
      if (name === undefined) break;
      if (held.has(name) || slots.has(name)) continue; // an earlier file of this name is claimed
      occupy(name, () => claimAndRun(name));
    }
    // Ready but no free slot: say so once, so a long queue is not silent.
    if (opts.events) {
      for (const name of queue) {
        if (announced.has(name)) continue;
        announced.add(name);
        opts.events.input({ name, location: source.location, phase: 'waiting' });
      }
    }
  };

  const scan = async (): Promise<void> => {
    const now = Date.now();
    if (now >= nextOrphanScan) {
      nextOrphanScan = now + orphanEvery;
      for (const input of await source.claimOrphans()) {
        if (stopping || held.has(input.name)) {
          if (!held.has(input.name)) await input.release();
          continue;
        }
        logger.info({ file: input.location }, 'resuming an input left in processing (an instance stopped mid-way)');
        // Due at once: the next free slot takes it, before anything new.
        held.set(input.name, { input, attempts: 0, dueAt: 0, lost: false });
      }
    }
    const listed = await source.list();
    lastScanAt = Date.now();
    scanFailures = 0;
    metrics?.scans.inc({ result: 'ok' });
    metrics?.lastScan.set(lastScanAt / 1000);
    let ready: string[];
    settleDueAt = undefined;
    if (source.needsStability) {
      const seen = tracker.observe(listed, lastScanAt);
      ready = seen.ready;
      settleDueAt = seen.nextDueAt;
    } else ready = listed.map((l) => l.name);
    const order = new Map(listed.map((l) => [l.name, l.mtimeMs]));
    ready.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0) || (a < b ? -1 : 1));
    for (const name of ready) if (!readySince.has(name)) readySince.set(name, lastScanAt);
    for (const name of readySince.keys()) if (!order.has(name)) readySince.delete(name);
    for (const name of claimErrors.keys()) if (!order.has(name)) claimErrors.delete(name);
    for (const name of announced) if (!order.has(name)) announced.delete(name);
    if (opts.events) {
      const readyNow = new Set(ready);
      for (const l of listed) {
        if (readyNow.has(l.name) || announced.has(l.name) || held.has(l.name)) continue;
        announced.add(l.name);
        opts.events.input({ name: l.name, location: source.location, phase: 'waiting' });
      }
    }
    queue = ready.filter((name) => !slots.has(name));
  };

  const loop = async (): Promise<void> => {
    try {
      while (!stopping) {
        const now = Date.now();
        // A scan at the interval, when a settling file is due, or when asked (file-system
        // events) — but not while ready inputs still wait for a slot: our own claims cause
        // events, and a scan then would only find what is queued already. Never busier than
        // every 20 ms.
        const asked = scanAsked && queue.length === 0;
        if (
          now - lastScanStart >= 20 &&
          (now >= nextScanAt || asked || (settleDueAt !== undefined && now >= settleDueAt))
        ) {
          scanAsked = false;
          lastScanStart = now;
          nextScanAt = now + scanIntervalMs;
          try {
            await scan();
          } catch (err) {
            scanFailures += 1;
            metrics?.scans.inc({ result: 'error' });
            logger.error(
              { location: source.location, err: (err as Error).message, failures: scanFailures },
              'scan failed; will try again',
            );
          }
        }
        if (stopping) break;
        fill();
        // Sleep until the next scan is due, or an input's retry (when a slot is free); a slot
        // that frees or a wake() ends the sleep early.
        let scanAt = Math.min(nextScanAt, settleDueAt ?? Infinity, scanAsked && queue.length === 0 ? 0 : Infinity);
        scanAt = Math.max(scanAt, lastScanStart + 20);
        let until = scanAt;
        if (slots.size < parallel)
          for (const w of held.values()) if (!slots.has(w.input.name)) until = Math.min(until, w.dueAt);
        await sleep(until - Date.now());
      }
    } finally {
      // Every input in flight is finished (its jobs and reports) before the watcher ends.
      await Promise.all([...slots.values()]);
      clearInterval(renewTimer);
      for (const w of held.values()) if (!w.lost) await w.input.release().catch(() => undefined);
      held.clear();
      gauges();
      await unsubscribe?.();
    }
  };

  const finished = loop();
  finished.catch(() => undefined);
  return {
    finished,
    wake,
    async stop() {
      stopping = true;
      nudge();
      await finished;
    },
    health(): HealthState {
      const names = [...handling];
      return {
        status: stopping ? 'stopping' : scanFailures >= 3 ? 'failing' : 'ok',
        location: source.location,
        lastScanAt: lastScanAt === undefined ? null : new Date(lastScanAt).toISOString(),
        inFlight: names.length,
        inFlightInputs: names,
        parallel,
        waitingRetry: held.size - names.length,
        queued: queue.length,
        processed,
      };
    },
  };
}
