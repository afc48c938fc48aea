import { sameIdentity } from '../storage/held-folder.js';
import type { FileLook, Finished, FinishOutcome } from './sources/model.js';

/** Default of the settle window (the `settleWindowMs` setting): how long a finished file is watched. */
export const DEFAULT_SETTLE_WINDOW_MS = 10 * 60_000;

/**
 * A file moved out of processing/, watched until `until` (docs/watch.md#the-settle-window): a
 * moved file keeps its inode, and a writer holding it open writes into it wherever it is.
 */
export interface Settling extends Finished {
  until: number;
}

/** What a look at a settling file's entry found: the same, gone (or another file), or changed. */
export type SettleVerdict = { kind: 'same' } | { kind: 'gone' } | { kind: 'changed'; what: string };

/**
 * Compares the entry's metadata now (lstat, never following a link) with what was processed.
 * Another inode at the name, a link or anything but a regular file is `gone`: the file was
 * moved away or replaced by someone, and is no longer ours to give back.
 */
export function settleVerdict(s: Settling, now: FileLook | undefined): SettleVerdict {
  if (!now?.isFile() || !sameIdentity(now, s)) return { kind: 'gone' };
  if (now.size !== s.size) return { kind: 'changed', what: `its size changed from ${s.size} to ${now.size} bytes` };
  if (now.mtimeMs !== s.mtimeMs) return { kind: 'changed', what: 'its modification time changed' };
  return { kind: 'same' };
}

/**
 * The files this instance finished that are still within their settle window, in memory: a
 * restart forgets them (docs/watch.md says why). One that changed, went or whose window ended
 * leaves the list.
 */
export class SettleList {
  private readonly files = new Map<string, Settling>();

  constructor(
    /** 0: nothing is watched after the move. */
    readonly windowMs: number,
  ) {}

  /** Starts watching a file just moved to done/ or failed/ (replacing an earlier entry of that name). */
  add(s: Finished, now: number): void {
    if (this.windowMs <= 0) return;
    this.files.set(`${s.outcome}/${s.name}`, { ...s, until: now + this.windowMs });
  }

  /**
   * Up to `max` of the files still to be watched at `now`, those looked at longest ago first
   * (they then go to the back: with more files than `max`, they take turns); those whose
   * window ended are dropped.
   */
  live(now: number, max = Number.POSITIVE_INFINITY): Settling[] {
    const out: Settling[] = [];
    for (const [key, s] of this.files) {
      if (s.until <= now) this.files.delete(key);
      else if (out.length < max) out.push(s);
    }
    for (const s of out) {
      const key = `${s.outcome}/${s.name}`;
      this.files.delete(key);
      this.files.set(key, s);
    }
    return out;
  }

  /** Stops watching `s` (it changed and was given back, or it went). */
  drop(s: Settling): void {
    const key = `${s.outcome}/${s.name}`;
    if (this.files.get(key) === s) this.files.delete(key);
  }

  get size(): number {
    return this.files.size;
  }
}

/** What became of a settling file that changed: given back to the top (`to`), or not, and why. */
export type SettleEvent =
  | { kind: 'requeued'; name: string; outcome: FinishOutcome; from: string; to: string; what: string }
  | { kind: 'error'; name: string; outcome: FinishOutcome; from: string; error: string };
