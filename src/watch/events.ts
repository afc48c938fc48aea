import type { ReportSummary } from '../report/model.js';

/**
 * Where an input of `htorder watch` is in its life: seen but still settling (`waiting`),
 * claimed and being worked on (`processing`), kept claimed for a later try because the API
 * or store was unavailable (`retry`), given back to settle because it changed while it was
 * processed (`requeued`), taken over by another instance (`lost`), or finished (`done`,
 * `failed`).
 */
export type InputPhase = 'waiting' | 'processing' | 'retry' | 'requeued' | 'lost' | 'done' | 'failed' | 'held';

export interface InputEvent {
  kind: 'input';
  /** The input's name in the drop location: one path segment, chosen by whoever dropped it. */
  name: string;
  /** Where it is now, for people: a folder path or `s3://bucket/key` (never a signed URL). */
  location: string;
  phase: InputPhase;
  /** Unix time in milliseconds. */
  at: number;
  /** done/failed: the counts of its result report, when one was written. */
  summary?: ReportSummary;
  /** failed, retry, requeued: why, in one line for people. */
  problem?: string;
  /** done/failed: from claim to reports in place. */
  durationMs?: number;
  /** retry: when it is tried again. */
  retryInMs?: number;
}

/**
 * The API as the watcher last saw it: `available: false` from the first input the API or
 * the credentials turned away, `true` again once an input got through. `since` is when the
 * current state began, so a consumer can tell how long an outage has lasted.
 */
export interface ApiEvent {
  kind: 'api';
  available: boolean;
  at: number;
  since: number;
  /** available: false: what the client saw (no secret: messages are redacted upstream). */
  problem?: string;
}

export type WatchEvent = InputEvent | ApiEvent;

/**
 * One watcher's events, for whoever wants them (notifications, the dashboard, tests). A
 * listener's throw or slow work never reaches the watcher: listeners are called after the
 * watcher's own step, each guarded, and must hand anything slow to their own queue.
 */
export class WatchEvents {
  private readonly listeners = new Set<(event: WatchEvent) => void>();
  private api: { available: boolean; since: number } = { available: true, since: Date.now() };

  /** Subscribes; returns the unsubscribe. */
  on(listener: (event: WatchEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  input(event: Omit<InputEvent, 'kind' | 'at'> & { at?: number }): void {
    this.emit({ kind: 'input', at: Date.now(), ...event });
  }

  /**
   * Reports what an attempt to reach the API showed; only a change is an event. `evidenceSince`
   * is when that attempt began (an input's start): with several inputs in flight, one that
   * began before the current state was seen proves nothing about it (a file whose calls got
   * through before an outage, finishing after another file saw the outage), so it changes
   * nothing and the state does not flap.
   */
  apiSeen(available: boolean, problem?: string, evidenceSince?: number): void {
    if (available === this.api.available) return;
    if (evidenceSince !== undefined && evidenceSince < this.api.since) return;
    const at = Date.now();
    this.api = { available, since: at };
    this.emit({ kind: 'api', available, at, since: at, ...(problem === undefined ? {} : { problem }) });
  }

  private emit(event: WatchEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A consumer's bug must not stop orders: it is the consumer's to log.
      }
    }
  }
}
