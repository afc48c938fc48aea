import type { Logger } from '../core/log/logger.js';
import type { WatchEvents } from './events.js';
import type { HealthState } from './health-server.js';
import type { WatchMetrics } from './metrics.js';
import { type Decision, type HandleResult, type Held, WatchScheduler } from './scheduler.js';
import type { ClaimedInput, DropSource } from './sources/model.js';

export interface WatcherOptions {
  source: DropSource;
  /** Processes one claimed input to the end (the CLI composes handleInput with the pipeline). */
  handle: (input: ClaimedInput, lease: { lost: () => boolean }) => Promise<HandleResult>;
  logger: Logger;
  /** The periodic scan is the source of truth; default 2000 ms. */
  scanIntervalMs?: number;
  /** Size and mtime unchanged this long means complete (folders); default 2000 ms. */
  stableMs?: number;
  /** Backoff for inputs whose API or store was unavailable (core/backoff.ts). Default 5 s … 5 min. */
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

/**
 * The daemon loop of `htorder watch`: the I/O around the scheduler (scheduler.ts). It scans the
 * source (listing, and now and then the orphans of crashed instances), claims and handles
 * what the scheduler says, in up to `parallel` slots, renews the claims it holds, and sleeps
 * until the scheduler's next time, a slot that frees or a wake-up (file-system events).
 */
export function startWatcher(opts: WatcherOptions): Watcher {
  const shell = new WatchShell(opts);
  const finished = shell.run();
  finished.catch(() => undefined);
  return {
    finished,
    wake: () => shell.wake(),
    async stop() {
      shell.stop();
      await finished;
    },
    health: () => shell.health(),
  };
}

class WatchShell {
  private readonly scheduler: WatchScheduler<ClaimedInput>;
  private readonly source: DropSource;
  private readonly logger: Logger;
  private readonly parallel: number;
  /** The slots' tasks (claim and handle one input). */
  private readonly tasks = new Set<Promise<void>>();
  private wakeSleeper: (() => void) | undefined;

  constructor(private readonly opts: WatcherOptions) {
    ({ source: this.source, logger: this.logger } = opts);
    this.parallel = Math.max(1, Math.floor(opts.parallel ?? 1));
    this.scheduler = new WatchScheduler({
      parallel: this.parallel,
      scanIntervalMs: opts.scanIntervalMs ?? 2000,
      stableMs: opts.stableMs ?? 2000,
      needsStability: opts.source.needsStability,
      retry: { baseMs: opts.retryMinMs ?? 5000, maxMs: opts.retryMaxMs ?? 300_000 },
      orphanScanEveryMs: opts.orphanScanEveryMs ?? 30_000,
    });
  }

  wake(): void {
    this.scheduler.ask();
    this.wakeSleeper?.();
  }

  stop(): void {
    this.scheduler.stop();
    this.wakeSleeper?.();
  }

  async run(): Promise<void> {
    const unsubscribe = this.opts.wakeOn?.(() => this.wake());
    const renewTimer = setInterval(() => this.renew(), this.opts.renewEveryMs ?? 10_000);
    renewTimer.unref();
    const { scheduler } = this;
    try {
      while (!scheduler.stopping) {
        const scan = scheduler.scanNow(Date.now());
        if (scan) await this.scan(scan.orphans);
        if (scheduler.stopping) break;
        for (const d of scheduler.fill(Date.now())) this.carry(d);
        await this.sleep(scheduler.wakeAt() - Date.now());
      }
    } finally {
      // Every input in flight is finished (its jobs and reports) before the watcher ends.
      await Promise.all(this.tasks);
      clearInterval(renewTimer);
      for (const input of scheduler.drain()) await input.release().catch(() => undefined);
      this.gauges();
      await unsubscribe?.();
    }
  }

  health(): HealthState {
    const s = this.scheduler.status();
    return {
      status: s.stopping ? 'stopping' : s.scanFailures >= 3 ? 'failing' : 'ok',
      location: this.source.location,
      lastScanAt: s.lastScanAt === undefined ? null : new Date(s.lastScanAt).toISOString(),
      inFlight: s.processing.length,
      inFlightInputs: s.processing,
      parallel: this.parallel,
      waitingRetry: s.waitingRetry,
      queued: s.queued,
      processed: s.processed,
    };
  }

  private async scan(orphans: boolean): Promise<void> {
    const { metrics } = this.opts;
    try {
      if (orphans) {
        for (const input of await this.source.claimOrphans()) {
          if (!this.scheduler.resume(input)) await input.release();
          else
            this.logger.info(
              { file: input.location },
              'resuming an input left in processing (an instance stopped mid-way)',
            );
        }
      }
      const listed = await this.source.list();
      const now = Date.now();
      for (const d of this.scheduler.listed(listed, now)) this.carry(d);
      metrics?.scans.inc({ result: 'ok' });
      metrics?.lastScan.set(now / 1000);
    } catch (err) {
      const failures = this.scheduler.scanFailed();
      metrics?.scans.inc({ result: 'error' });
      this.logger.error(
        { location: this.source.location, err: (err as Error).message, failures },
        'scan failed; will try again',
      );
    }
  }

  /** Carries out one decision of the scheduler. */
  private carry(d: Decision<ClaimedInput>): Promise<void> | undefined {
    const { events } = this.opts;
    switch (d.kind) {
      case 'claim':
        return this.occupy(d.name, () => this.claim(d.name));
      case 'process':
        return this.occupy(d.held.input.name, () => this.process(d.held));
      case 'waiting':
        events?.input({ name: d.name, location: this.source.location, phase: 'waiting' });
        return;
      case 'retry': {
        const { input, attempts } = d.held;
        this.logger.warn(
          { file: input.location, retryInMs: d.delayMs, attempts },
          'API or store unavailable: input kept in processing, will retry',
        );
        const problem = 'the API or the store was unavailable';
        events?.input({ name: input.name, location: input.location, phase: 'retry', retryInMs: d.delayMs, problem });
        return;
      }
      case 'release':
        return d.input.release().catch(() => undefined);
      case 'lost':
        // No longer ours: its private copy goes now, not when the watcher closes.
        events?.input({ name: d.input.name, location: d.input.location, phase: 'lost' });
        return d.input.forget().catch(() => undefined);
    }
  }

  /** Runs `task` in the slot `name`; the slot frees (and the loop looks for more work) when it ends. */
  private occupy(name: string, task: () => Promise<void>): undefined {
    const p = task()
      .catch((err: unknown) => this.logger.error({ name, err: (err as Error).message }, 'input could not be handled'))
      .finally(() => {
        this.tasks.delete(p);
        this.scheduler.free(name);
        this.wakeSleeper?.();
      });
    this.tasks.add(p);
    return undefined;
  }

  private async claim(name: string): Promise<void> {
    let input: ClaimedInput | undefined;
    try {
      input = await this.source.claim(name);
    } catch (err) {
      // One entry that cannot be claimed (a name the file system refuses, a file that vanished
      // half-way) must not stop the others: later files are still taken.
      const message = (err as Error).message;
      if (this.scheduler.claimFailed(name, message))
        this.logger.error({ name, err: message }, 'could not claim this input; will try again at each scan');
      return;
    }
    const claimed = this.scheduler.claimed(name, input, Date.now());
    if (!claimed) return; // another instance has it
    if (claimed.waitedMs !== undefined) this.opts.metrics?.pickupDelay.observe(claimed.waitedMs / 1000);
    this.logger.info({ file: claimed.held.input.location }, 'claimed input');
    await this.process(claimed.held);
  }

  private async process(held: Held<ClaimedInput>): Promise<void> {
    const { input } = held;
    this.gauges();
    this.opts.events?.input({ name: input.name, location: input.location, phase: 'processing' });
    let result: HandleResult;
    try {
      result = await this.opts.handle(input, { lost: () => held.lost });
    } catch (err) {
      // handle() turns every expected problem into a result; this is the store failing
      // mid-move: keep the claim and try again later rather than lose the input.
      this.logger.error(
        { file: input.location, err: (err as Error).message },
        'input could not be finished; will retry',
      );
      result = 'retry';
    }
    const next = this.scheduler.handled(held, result, Date.now());
    if (next) await this.carry(next);
    this.opts.metrics?.files.inc({ outcome: result });
    this.gauges();
  }

  /** Renews every claim held; one that turns out to be another instance's is marked lost. */
  private renew(): void {
    for (const held of this.scheduler.renewals()) {
      held.input.renew().then(
        (ok) => {
          if (!ok && this.scheduler.markLost(held))
            this.logger.warn({ file: held.input.location }, 'claim lost: another instance took this input over');
        },
        (err: unknown) =>
          this.logger.warn({ file: held.input.location, err: (err as Error).message }, 'could not renew the claim'),
      );
    }
  }

  private gauges(): void {
    const s = this.scheduler.status();
    this.opts.metrics?.inFlight.set(s.processing.length);
    this.opts.metrics?.waiting.set(s.waitingRetry);
  }

  /** Sleeps `ms`, or until a slot frees or a wake-up; not at all once stopping. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.scheduler.stopping) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.wakeSleeper = done;
    });
  }
}
