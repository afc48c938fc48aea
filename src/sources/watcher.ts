import type { Logger } from '../log/logger.js';
import type { WatchEvents } from '../observe/input-events.js';
import type { WatchMetrics } from '../observe/watch-metrics.js';
import type { HealthState } from '../observe/health-server.js';
import type { ClaimedInput, DropSource } from './model.js';
import { StabilityTracker } from './stability.js';

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
}

export interface Watcher {
  /** Stop taking new inputs, finish the one in flight, release the ones waiting; resolves when done. */
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
 * The daemon loop of `htorder watch`: scan → wait until stable → claim → handle, one input
 * at a time (each input's jobs are worked on concurrently by the pipeline). Inputs whose API
 * was unavailable keep their claim and are retried with a backoff; at start and then every
 * so often, inputs abandoned in processing/ by crashed instances are resumed.
 */
export function startWatcher(opts: WatcherOptions): Watcher {
  const { source, logger } = opts;
  const scanIntervalMs = opts.scanIntervalMs ?? 2000;
  const tracker = new StabilityTracker(opts.stableMs ?? 2000);
  const retryMinMs = opts.retryMinMs ?? 5000;
  const retryMaxMs = opts.retryMaxMs ?? 300_000;
  const orphanEvery = opts.orphanScanEveryMs ?? 30_000;
  const metrics = opts.metrics;
  const held = new Map<string, Waiting>();
  const readySince = new Map<string, number>();
  /** The last claim error of each name, so a file that cannot be claimed is not logged every scan. */
  const claimErrors = new Map<string, string>();
  /** Names already announced as waiting, so each is announced once while it settles. */
  const announced = new Set<string>();
  let stopping = false;
  let wakePending = false;
  let wakeSleeper: (() => void) | undefined;
  let inFlight: string | undefined;
  let lastScanAt: number | undefined;
  let scanFailures = 0;
  let processed = 0;
  let nextOrphanScan = 0;

  const wake = (): void => {
    wakePending = true;
    wakeSleeper?.();
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
      if (wakePending || stopping) return resolve();
      const t = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(t);
        wakeSleeper = undefined;
        resolve();
      }
      wakeSleeper = done;
    });

  const run = async (w: Waiting): Promise<void> => {
    const { input } = w;
    inFlight = input.name;
    metrics?.inFlight.set(1);
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
      inFlight = undefined;
      metrics?.inFlight.set(0);
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
      if (result === 'lost' || w.lost)
        opts.events?.input({ name: input.name, location: input.location, phase: 'lost' });
      if (result === 'done' || result === 'failed') processed += 1;
    }
    metrics?.files.inc({ outcome: result });
    metrics?.waiting.set(held.size);
  };

  const claimAndRun = async (input: ClaimedInput): Promise<void> => {
    const w: Waiting = { input, attempts: 0, dueAt: 0, lost: false };
    held.set(input.name, w);
    await run(w);
  };

  const cycle = async (): Promise<number | undefined> => {
    const now = Date.now();
    if (now >= nextOrphanScan) {
      nextOrphanScan = now + orphanEvery;
      for (const input of await source.claimOrphans()) {
        if (stopping) {
          await input.release();
          continue;
        }
        logger.info({ file: input.location }, 'resuming an input left in processing (an instance stopped mid-way)');
        await claimAndRun(input);
      }
    }
    const listed = await source.list();
    lastScanAt = Date.now();
    scanFailures = 0;
    metrics?.scans.inc({ result: 'ok' });
    metrics?.lastScan.set(lastScanAt / 1000);
    let nextDueAt: number | undefined;
    let ready: string[];
    if (source.needsStability) {
      const seen = tracker.observe(listed, lastScanAt);
      ready = seen.ready;
      nextDueAt = seen.nextDueAt;
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
    for (const name of ready) {
      if (stopping) break;
      if (held.has(name)) continue; // an earlier file of this name waits for retry in processing/
      let input: ClaimedInput | undefined;
      try {
        input = await source.claim(name);
      } catch (err) {
        // One entry that cannot be claimed (a name the file system refuses, a file that
        // vanished half-way) must not stop the scan: later files are still taken.
        // Logged once per name and error, not at every scan.
        const message = (err as Error).message;
        if (claimErrors.get(name) !== message) {
          claimErrors.set(name, message);
          logger.error({ name, err: message }, 'could not claim this input; will try again at each scan');
        }
        continue;
      }
      claimErrors.delete(name);
      announced.delete(name);
      tracker.forget(name);
      const since = readySince.get(name);
      readySince.delete(name);
      if (!input) continue; // another instance has it
      if (since !== undefined) metrics?.pickupDelay.observe((Date.now() - since) / 1000);
      logger.info({ file: input.location }, 'claimed input');
      await claimAndRun(input);
    }
    for (const w of [...held.values()]) {
      if (stopping) break;
      if (w.lost) held.delete(w.input.name);
      else if (w.dueAt <= Date.now()) await run(w);
    }
    for (const w of held.values()) nextDueAt = Math.min(nextDueAt ?? Infinity, w.dueAt);
    return nextDueAt;
  };

  const loop = async (): Promise<void> => {
    try {
      while (!stopping) {
        wakePending = false;
        const started = Date.now();
        let nextDueAt: number | undefined;
        try {
          nextDueAt = await cycle();
        } catch (err) {
          scanFailures += 1;
          metrics?.scans.inc({ result: 'error' });
          logger.error(
            { location: source.location, err: (err as Error).message, failures: scanFailures },
            'scan failed; will try again',
          );
        }
        if (stopping) break;
        // Next scan: at the interval, or as soon as a file waiting to settle is due (so pick-up
        // follows stability at once), but never busier than every 20 ms.
        const until = Math.min(started + scanIntervalMs, nextDueAt ?? Infinity);
        await sleep(Math.max(20, until - Date.now()));
      }
    } finally {
      clearInterval(renewTimer);
      for (const w of held.values()) if (!w.lost) await w.input.release().catch(() => undefined);
      held.clear();
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
      wakeSleeper?.();
      await finished;
    },
    health(): HealthState {
      return {
        status: stopping ? 'stopping' : scanFailures >= 3 ? 'failing' : 'ok',
        location: source.location,
        lastScanAt: lastScanAt === undefined ? null : new Date(lastScanAt).toISOString(),
        inFlight: inFlight ?? null,
        waitingRetry: held.size - (inFlight ? 1 : 0),
        processed,
      };
    },
  };
}
