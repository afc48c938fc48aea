import type { Logger } from '../core/log/logger.js';
import type { InputEvent, WatchEvents } from './events.js';
import type { HealthState } from './health-server.js';
import type { WatchMetrics } from './metrics.js';
import { type Decision, type HandleResult, type Held, type SchedulerOptions, WatchScheduler } from './scheduler.js';
import type { SettleEvent } from './settle-window.js';
import { type ClaimedInput, type DropSource, DropTakenError } from './sources/model.js';

export interface WatcherOptions extends Omit<SchedulerOptions, 'needsStability' | 'random'> {
  source: DropSource;
  /** Processes one claimed input to the end (the CLI composes handleInput with the pipeline). */
  handle: (input: ClaimedInput, lease: { lost: () => boolean }) => Promise<Handled>;
  logger: Logger;
  /** How often claims are renewed (a third of the source's lease). Default 10 s. */
  renewEveryMs?: number;
  metrics?: WatchMetrics;
  /** Told where each input is in its life (waiting, processing, retry, lost); handle() tells done/failed. */
  events?: WatchEvents;
  /**
   * Called at each scan before the listing: gives approved inputs in held/ back to the top
   * (docs/guardrails.md), where this scan finds them. A throw is logged, never fatal.
   */
  takeBack?: () => Promise<void>;
  /** Subscribes to early wake-ups (file-system events); returns the unsubscribe. */
  wakeOn?: (wake: () => void) => () => void | Promise<void>;
  /** Told when a finished file changed within its settle window: given back to the top, or why it could not be. */
  onSettled?: (e: SettleEvent) => void;
}

/** handle()'s result; a retry may say what the input showed (jobs in doubt), for its `retry` event. */
export type Handled = HandleResult | { result: 'retry'; detail: Pick<InputEvent, 'summary' | 'problem'> };

/**
 * The daemon loop of `htorder watch`, running from its construction: the I/O around the
 * scheduler (scheduler.ts). It scans the source (and now and then its orphans), claims and
 * handles inputs in up to `parallel` slots as the scheduler decides, renews the claims it
 * holds, and sleeps until the scheduler's next time, a slot that frees or a wake-up
 * (file-system events).
 */
export class Watcher {
  /** Resolves when the loop has ended (after stop(), or a fatal error: then it rejects). */
  readonly finished: Promise<void>;
  private readonly scheduler: WatchScheduler<ClaimedInput>;
  /** The slots' tasks (claim and handle one input). */
  private readonly tasks = new Set<Promise<void>>();
  private wakeSleeper: (() => void) | undefined;
  /** Why the loop must end now (the location was marked for another ledger): finished rejects with it. */
  private fatal: Error | undefined;

  constructor(private readonly opts: WatcherOptions) {
    this.scheduler = new WatchScheduler({ ...opts, needsStability: opts.source.needsStability });
    this.finished = this.run();
    this.finished.catch(() => undefined);
  }

  /** Stop taking new inputs, finish every one in flight, release the ones waiting; resolves when done. */
  async stop(): Promise<void> {
    this.scheduler.stop();
    this.wakeSleeper?.();
    await this.finished;
  }

  health(): HealthState {
    return this.scheduler.health(this.opts.source.location);
  }

  private wake(): void {
    this.scheduler.ask();
    this.wakeSleeper?.();
  }

  private async run(): Promise<void> {
    const unsubscribe = this.opts.wakeOn?.(() => this.wake());
    const renewTimer = setInterval(() => this.renew(), this.opts.renewEveryMs ?? 10_000);
    renewTimer.unref();
    const { scheduler } = this;
    try {
      while (!scheduler.stopping) {
        const scan = scheduler.scanNow(Date.now());
        if (scan) await this.scan(scan.orphans);
        if (scheduler.stopping) break;
        for (const d of scheduler.fill(Date.now())) void this.carry(d);
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
    if (this.fatal) throw this.fatal;
  }

  private async scan(orphans: boolean): Promise<void> {
    const { source, logger, metrics } = this.opts;
    try {
      for (const input of orphans ? await source.claimOrphans() : []) {
        const resumed = this.scheduler.resume(input);
        if (resumed === 'resumed')
          logger.info({ file: input.location }, 'resuming an input left in processing (an instance stopped mid-way)');
        // Given back; a failure to (the store) leaves a claim that runs out: never stops the others.
        else await input.release().catch(() => undefined);
      }
      await this.opts.takeBack?.().catch((err: unknown) => {
        logger.warn({ err: (err as Error).message }, 'could not look at held inputs; will try again at the next scan');
      });
      // Before the listing: a finished file given back now is listed by this very scan.
      await settleFinished(this.scheduler, source, this.opts.onSettled);
      const listed = await source.list();
      const now = Date.now();
      for (const d of this.scheduler.listed(listed, now)) void this.carry(d);
      metrics?.scans.inc({ result: 'ok' });
      metrics?.lastScan.set(now / 1000);
    } catch (err) {
      if (err instanceof DropTakenError) {
        // Another ledger's watcher marked the location: finish what is in flight, take nothing more.
        logger.error(
          { location: source.location, err: err.message },
          'stopping: the drop location was marked for another ledger',
        );
        this.fatal = err;
        this.scheduler.stop();
        return;
      }
      const failures = this.scheduler.scanFailed();
      metrics?.scans.inc({ result: 'error' });
      logger.error({ location: source.location, err: (err as Error).message, failures }, 'scan failed; will try again');
    }
  }

  /** Carries out one decision of the scheduler. */
  private async carry(d: Decision<ClaimedInput>, retry?: Pick<InputEvent, 'summary' | 'problem'>): Promise<void> {
    const { events, logger, source } = this.opts;
    if (d.kind === 'claim') this.occupy(d.name, () => this.claim(d.name));
    else if (d.kind === 'process') this.occupy(d.held.input.name, () => this.process(d.held));
    else if (d.kind === 'waiting') events?.input({ name: d.name, location: source.location, phase: 'waiting' });
    else if (d.kind === 'release') await d.input.release().catch(() => undefined);
    else if (d.kind === 'lost') {
      // No longer ours: its private copy goes now, not when the watcher closes.
      events?.input({ name: d.input.name, location: d.input.location, phase: 'lost' });
      await d.input.forget().catch(() => undefined);
    } else {
      const { input, attempts } = d.held;
      const at = { file: input.location, retryInMs: d.delayMs, attempts };
      logger.warn(at, 'API or store unavailable: input kept in processing, will retry');
      const { location, name } = input;
      const problem = 'the API or the store was unavailable';
      events?.input({ name, location, phase: 'retry', retryInMs: d.delayMs, problem, ...retry });
    }
  }

  /** Runs `task` in the slot `name`; the slot frees (and the loop looks for more work) when it ends. */
  private occupy(name: string, task: () => Promise<void>): void {
    const p = task()
      .catch((err: unknown) =>
        this.opts.logger.error({ name, err: (err as Error).message }, 'input could not be handled'),
      )
      .finally(() => {
        this.tasks.delete(p);
        this.scheduler.free(name);
        this.gauges();
        this.wakeSleeper?.();
      });
    this.tasks.add(p);
  }

  private async claim(name: string): Promise<void> {
    let input: ClaimedInput | undefined;
    try {
      input = await this.opts.source.claim(name);
    } catch (err) {
      // One entry that cannot be claimed (a name the file system refuses, a file that vanished
      // half-way) must not stop the others.
      const message = (err as Error).message;
      if (this.scheduler.claimFailed(name, message))
        this.opts.logger.error({ name, err: message }, 'could not claim this input; will try again at each scan');
      return;
    }
    const claimed = this.scheduler.claimed(name, input, Date.now());
    if (!claimed) return; // another instance has it
    if (claimed.waitedMs !== undefined) this.opts.metrics?.pickupDelay.observe(claimed.waitedMs / 1000);
    this.opts.logger.info({ file: claimed.held.input.location }, 'claimed input');
    await this.process(claimed.held);
  }

  private async process(held: Held<ClaimedInput>): Promise<void> {
    const { input } = held;
    const { events, logger, metrics } = this.opts;
    this.gauges();
    events?.input({ name: input.name, location: input.location, phase: 'processing' });
    let handled: Handled;
    try {
      handled = await this.opts.handle(input, { lost: () => held.lost });
    } catch (err) {
      // handle() turns every expected problem into a result; this is the store failing
      // mid-move: keep the claim and try again later rather than lose the input.
      logger.error({ file: input.location, err: (err as Error).message }, 'input could not be finished; will retry');
      handled = 'retry';
    }
    const result = typeof handled === 'string' ? handled : handled.result;
    if (input.moved) this.scheduler.finished(input.moved, Date.now());
    const next = this.scheduler.handled(held, result, Date.now());
    if (next) await this.carry(next, typeof handled === 'string' ? undefined : handled.detail);
    metrics?.files.inc({ outcome: result });
  }

  /** Renews every claim held; one that turns out to be another instance's is marked lost. */
  private renew(): void {
    const { logger } = this.opts;
    for (const held of this.scheduler.renewals()) {
      const file = held.input.location;
      held.input.renew().then(
        (ok) => {
          if (!ok && this.scheduler.markLost(held))
            logger.warn({ file }, 'claim lost: another instance took this input over');
        },
        (err: unknown) => logger.warn({ file, err: (err as Error).message }, 'could not renew the claim'),
      );
    }
  }

  private gauges(): void {
    const { inFlight, waitingRetry } = this.scheduler.health(this.opts.source.location);
    this.opts.metrics?.inFlight.set(inFlight);
    this.opts.metrics?.waiting.set(waitingRetry);
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

/**
 * The settle window's I/O (docs/watch.md#the-settle-window): the scheduler says which finished
 * files to look at and which of them to give back; the source looks and moves. A failure is
 * told, and never fails the scan.
 */
export async function settleFinished(
  scheduler: WatchScheduler<ClaimedInput>,
  source: DropSource,
  tell: ((e: SettleEvent) => void) | undefined,
): Promise<void> {
  if (!source.lookFinished || !source.giveBackFinished) return;
  for (const s of scheduler.settleLooks(Date.now())) {
    const { name, outcome, location: from } = s;
    try {
      const what = scheduler.looked(s, await source.lookFinished(s));
      if (what === undefined) continue;
      const to = await source.giveBackFinished(s);
      if (to) tell?.({ kind: 'requeued', name, outcome, from, to, what });
    } catch (err) {
      scheduler.settleFailed(s);
      tell?.({ kind: 'error', name, outcome, from, error: (err as Error).message });
    }
  }
}
