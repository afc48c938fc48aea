/**
 * Decides when a file in a drop folder is complete. Pure; the caller feeds observations.
 *
 * A file is ready when its writer left a `X.done` marker, or when its size and mtime have
 * not changed for `stableMs` by our own clock (a writer that is still copying keeps
 * changing one or the other). Our clock, not the file's mtime, measures the quiet time, so
 * skewed clocks on a network share cannot make a half-written file look old.
 */

export interface Observation {
  name: string;
  size: number;
  mtimeMs: number;
  marked: boolean;
}

interface Seen {
  size: number;
  mtimeMs: number;
  /** When we first saw this exact size and mtime. */
  since: number;
}

export class StabilityTracker {
  private readonly seen = new Map<string, Seen>();

  constructor(private readonly stableMs: number) {}

  /**
   * Records one scan. Returns the names that are ready now, and when the next one of the
   * others will be (so the caller can scan again exactly then instead of a whole interval later).
   */
  observe(files: readonly Observation[], now: number): { ready: string[]; nextDueAt: number | undefined } {
    const present = new Set<string>();
    const ready: string[] = [];
    let nextDueAt: number | undefined;
    for (const f of files) {
      present.add(f.name);
      const prev = this.seen.get(f.name);
      const same = prev !== undefined && prev.size === f.size && prev.mtimeMs === f.mtimeMs;
      const since = same ? prev.since : now;
      if (!same) this.seen.set(f.name, { size: f.size, mtimeMs: f.mtimeMs, since });
      if (f.marked || now - since >= this.stableMs) ready.push(f.name);
      else nextDueAt = Math.min(nextDueAt ?? Infinity, since + this.stableMs);
    }
    for (const name of this.seen.keys()) if (!present.has(name)) this.seen.delete(name);
    return { ready, nextDueAt };
  }

  /** Forgets a file (taken, or gone): if the same name appears again it is watched afresh. */
  forget(name: string): void {
    this.seen.delete(name);
  }
}
