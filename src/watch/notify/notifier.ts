import { hostname } from 'node:os';
import { basename } from 'node:path';
import { notifyWebhooks, type NotifyEventName, type WebhookConfig } from '../../core/config/notify-config.js';
import type { Settings } from '../../core/config/resolve-settings.js';
import type { Logger } from '../../core/log/logger.js';
import type { InputEvent, WatchEvent } from '../events.js';
import {
  apiNotification,
  countJobs,
  digestNotification,
  dispatchNotification,
  emptyDigest,
  inDoubtCount,
  inputNotification,
  nextDigestAt,
  type DigestCounts,
  type Notification,
} from './notification.js';
import { payloadFor } from './payloads.js';
import { WebhookSender, type SenderOptions } from './webhook-sender.js';

export interface NotifierOptions {
  logger: Logger;
  /** The command telling: `watch`, `run` or `track`; with the host name, the notification's origin. */
  command: 'watch' | 'run' | 'track';
  sender?: SenderOptions;
}

interface Target {
  config: WebhookConfig;
  sender: WebhookSender;
  /** api-unavailable: the timer of the current outage, and whether this webhook was told of it. */
  outageTimer?: NodeJS.Timeout;
  toldOutage: boolean;
  digest?: { counts: DigestCounts; from: number; timer?: NodeJS.Timeout };
}

/**
 * Turns watch events into webhook notifications (docs/notifications.md): an input that
 * failed, jobs left in doubt (once per input until it ends), the API unavailable for longer
 * than each webhook's threshold (once per outage) and available again, optionally each input
 * done, and a daily digest. `listener` is what WatchEvents calls: it decides and queues, and
 * never waits for a webhook (the senders deliver in the background).
 */
export class Notifier {
  private readonly targets: Target[];
  private readonly origin: string;
  /** Inputs whose jobs in doubt were already told, until they end. */
  private readonly toldInDoubt = new Set<string>();
  private outage: { since: number; problem?: string } | undefined;
  private toldUnreachable = false;

  constructor(
    webhooks: readonly WebhookConfig[],
    private readonly opts: NotifierOptions,
  ) {
    this.origin = `htorder ${opts.command} on ${hostname()}`;
    this.targets = webhooks.map((config) => ({
      config,
      sender: new WebhookSender(config.url, config.label, opts.logger, opts.sender),
      toldOutage: false,
    }));
    // A digest is a daemon's: a run ends long before the next one is due.
    if (opts.command !== 'watch') return;
    for (const t of this.targets.filter((t) => t.config.digestAt)) {
      t.digest = { counts: emptyDigest(), from: Date.now() };
      this.scheduleDigest(t);
    }
  }

  /** For WatchEvents.on. Never throws (a notification must not stop orders). */
  readonly listener = (event: WatchEvent): void => {
    try {
      if (event.kind === 'api') this.onApi(event.available, event.since, event.problem);
      else this.onInput(event);
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, 'notification not sent: internal error');
    }
  };

  /** Sends to every webhook that wants `event`. */
  notify(event: NotifyEventName, n: Notification): void {
    for (const t of this.targets) if (t.config.events.includes(event)) this.deliver(t, n);
  }

  /**
   * `htorder run`: one input's outcome, told as watch tells a finished input (failed, done) or
   * one whose jobs are in doubt. `unavailable`: the API could not be reached at all, told at
   * once: a run cannot wait for an outage to last.
   */
  runOutcome(
    file: string,
    status: 'ok' | 'invalid' | 'unreadable' | 'unavailable' | 'held',
    summary?: InputEvent['summary'],
    problem?: string,
  ): void {
    const event = { kind: 'input' as const, name: basename(file), location: file, at: Date.now(), summary, problem };
    if (status === 'unavailable') {
      if (inDoubtCount(summary) > 0) this.onInput({ ...event, phase: 'retry' });
      else this.apiUnreachable(problem ?? 'the API was unavailable');
      return;
    }
    if (status !== 'ok') event.problem ??= 'see its reports';
    this.onInput({ ...event, phase: status === 'ok' ? 'done' : status === 'held' ? 'held' : 'failed' });
  }

  /** `htorder track`: a job was despatched; told to the webhooks that want `dispatched`. */
  dispatched(record: Parameters<typeof dispatchNotification>[0]): void {
    this.notify('dispatched', dispatchNotification(record, this.origin));
  }

  /** `htorder run`: the API could not be reached (or the credentials were refused); told once per run. */
  apiUnreachable(problem: string): void {
    if (this.toldUnreachable) return;
    this.toldUnreachable = true;
    const now = Date.now();
    this.notify('api-unavailable', apiNotification('api-unavailable', now, now, this.origin, problem));
  }

  /** Stops the timers and gives queued notifications at most `waitMs` to go out. */
  async close(waitMs = 5000): Promise<void> {
    for (const t of this.targets) {
      clearTimeout(t.outageTimer);
      clearTimeout(t.digest?.timer);
    }
    await Promise.all(this.targets.map((t) => t.sender.close(waitMs)));
  }

  /** Sends each digest webhook its counts since its last digest, and starts counting afresh. */
  sendDigests(now = Date.now()): void {
    for (const t of this.targets) if (t.digest) this.sendDigest(t, now);
  }

  private onInput(event: InputEvent): void {
    const doubt = inDoubtCount(event.summary);
    if (event.phase === 'held') {
      this.count((d) => countJobs(d, event.summary));
      this.notify('awaiting-approval', inputNotification('awaiting-approval', event, this.origin));
      return;
    }
    if (event.phase === 'failed' || event.phase === 'done') {
      this.count((d) => {
        if (event.phase === 'done') d.inputsDone += 1;
        else d.inputsFailed += 1;
        if (doubt > 0 && !this.toldInDoubt.has(event.name)) d.inputsInDoubt += 1;
        countJobs(d, event.summary);
      });
      const told = this.toldInDoubt.delete(event.name);
      const n = inputNotification(event.phase, event, this.origin);
      for (const t of this.targets) {
        // A webhook that wants this phase is told it (its counts show the jobs in doubt); one that
        // wants only in-doubt is told of jobs in doubt it has not heard of yet.
        if (t.config.events.includes(event.phase)) this.deliver(t, n);
        else if (doubt > 0 && !told && t.config.events.includes('in-doubt')) {
          this.deliver(t, inputNotification('in-doubt', event, this.origin));
        }
      }
      return;
    }
    if (event.phase === 'lost') this.toldInDoubt.delete(event.name);
    if (doubt > 0 && !this.toldInDoubt.has(event.name)) {
      this.toldInDoubt.add(event.name);
      this.count((d) => {
        d.inputsInDoubt += 1;
      });
      this.notify('in-doubt', inputNotification('in-doubt', event, this.origin));
    }
  }

  private onApi(available: boolean, since: number, problem?: string): void {
    if (!available) {
      this.outage = { since, ...(problem === undefined ? {} : { problem }) };
      this.count((d) => {
        d.apiOutages += 1;
      });
      for (const t of this.targets) {
        if (!t.config.events.includes('api-unavailable')) continue;
        clearTimeout(t.outageTimer);
        t.toldOutage = false;
        const wait = Math.max(0, since + t.config.apiUnavailableMs - Date.now());
        t.outageTimer = setTimeout(() => this.outageLasted(t, since), wait);
        t.outageTimer.unref();
      }
      return;
    }
    const outage = this.outage;
    this.outage = undefined;
    for (const t of this.targets) {
      clearTimeout(t.outageTimer);
      t.outageTimer = undefined;
      // Recovery is news only to a webhook that was told of the outage.
      if (outage && t.toldOutage && t.config.events.includes('api-recovered')) {
        this.deliver(t, apiNotification('api-recovered', outage.since, since, this.origin));
      }
      t.toldOutage = false;
    }
  }

  private outageLasted(t: Target, since: number): void {
    if (this.outage?.since !== since) return;
    t.toldOutage = true;
    // A timer may fire a millisecond before the wall clock says it is due: never report less than the threshold.
    const now = Math.max(Date.now(), since + t.config.apiUnavailableMs);
    this.deliver(t, apiNotification('api-unavailable', since, now, this.origin, this.outage.problem));
  }

  private deliver(t: Target, n: Notification): void {
    const what = n.input ? `${n.event}: ${n.input.name}` : n.event;
    t.sender.send(payloadFor(t.config.format, n), what);
  }

  private count(add: (d: DigestCounts) => void): void {
    for (const t of this.targets) if (t.digest) add(t.digest.counts);
  }

  private scheduleDigest(t: Target): void {
    const at = t.config.digestAt;
    if (!t.digest || at === undefined) return;
    const now = Date.now();
    const timer = setTimeout(() => {
      this.sendDigest(t, Date.now());
      this.scheduleDigest(t);
    }, nextDigestAt(now, at) - now);
    timer.unref();
    t.digest.timer = timer;
  }

  private sendDigest(t: Target, now: number): void {
    if (!t.digest) return;
    this.deliver(t, digestNotification(t.digest.counts, t.digest.from, now, this.origin));
    t.digest.counts = emptyDigest();
    t.digest.from = now;
  }
}

/**
 * The notifier of a command, or undefined when no webhook is configured. Reads the `notify`
 * section and settings (UsageError, exit 2, for a wrong one) and logs each webhook by label.
 */
export function notifierFor(
  settings: Settings,
  logger: Logger,
  command: NotifierOptions['command'],
  sender?: SenderOptions,
): Notifier | undefined {
  const webhooks = notifyWebhooks(settings);
  if (webhooks.length === 0) return undefined;
  for (const w of webhooks) {
    logger.info({ webhook: w.label, format: w.format, events: w.events, digestAt: w.digestAt }, 'notifications on');
  }
  return new Notifier(webhooks, { logger, command, ...(sender ? { sender } : {}) });
}
