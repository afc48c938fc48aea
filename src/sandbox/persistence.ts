import { restoreSnapshot, takeSnapshot, type SandboxSnapshot } from './snapshot.js';
import type { World } from './state.js';

/** What a store found when asked for the saved state. */
export type StoredState =
  /** Nothing changed since this store last read or wrote it. */
  | { kind: 'unchanged' }
  /** There is no saved state (never saved, or removed by a reset). */
  | { kind: 'none' }
  /** The saved state, parsed but not yet checked: restoreSnapshot treats it as hostile. */
  | { kind: 'saved'; state: unknown };

/**
 * Where a persistent sandbox keeps its state between runs and shares it between processes.
 * The caller implements it (the app layer: a file under the state dir, written atomically,
 * with a lock), so the simulator itself does no I/O and knows no paths.
 */
export interface SandboxStateStore {
  readIfChanged(): Promise<StoredState>;
  /** Runs `fn` holding the store's lock: no other process writes the state meanwhile. */
  withLock<T>(fn: () => Promise<T>): Promise<T>;
  write(state: SandboxSnapshot): Promise<void>;
}

interface Pending {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * One world shared through a store by every process that opens it (`run --sandbox` beside a
 * `watch --sandbox`). Requests that may change it run under the store's lock, on the latest
 * saved state, and answer only once the change is saved: a job number is never handed out
 * twice, and a caller never records a job (in its ledger) that the sandbox could forget.
 * Requests waiting at the same time share one lock and one write (group commit) instead of
 * queueing for one each. Requests that only read first pick up what another process saved.
 */
export class SharedWorld {
  private tail: Promise<unknown> = Promise.resolve();
  private queue: Pending[] = [];
  private draining = false;

  constructor(
    private readonly world: World,
    private readonly store: SandboxStateStore,
  ) {}

  /** Picks up what another process saved; at the start, the saved state (a bad one throws). */
  read(): Promise<void> {
    return this.serial(() => this.refresh());
  }

  /** Runs `fn` (synchronous, as every handler is) on the latest state, and saves what it changed. */
  change<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      try {
        // Each request is answered only once the batch is saved.
        const answers = await this.serial(() =>
          this.store.withLock(async () => {
            await this.refresh();
            const settled = batch.map((p) => {
              try {
                const value = p.fn();
                return () => p.resolve(value);
              } catch (err) {
                return () => p.reject(err);
              }
            });
            if (this.world.dirty) {
              // Still dirty if this throws: the next change saves it, unless another process
              // saved first, in which case its state wins (and these requests were answered 500).
              await this.store.write(takeSnapshot(this.world));
              this.world.dirty = false;
            }
            return settled;
          }),
        );
        for (const answer of answers) answer();
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.draining = false;
  }

  private async refresh(): Promise<void> {
    const found = await this.store.readIfChanged();
    if (found.kind === 'saved') restoreSnapshot(this.world, found.state);
    else if (found.kind === 'none') {
      // Removed by a reset in another process: start over too (its ledger entries are gone).
      this.world.reset();
      this.world.dirty = false;
    }
  }

  /** One thing at a time in this process: a reload never lands between a change and its save. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
