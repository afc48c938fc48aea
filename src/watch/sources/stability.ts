/**
 * Decides when a file in a drop folder is complete. Pure; the caller feeds observations.
 *
 * A file is ready when its writer left a `X.done` marker, or when its size and mtime have
 * not changed for `stableMs` by our own clock (a writer that is still copying keeps
 * changing one or the other). Our clock, not the file's mtime, measures the quiet time, so
 * skewed clocks on a network share cannot make a half-written file look old.
 *
 * One exception, for a backlog (files left while no watcher ran): a file whose mtime is
 * already `stableMs` old when it is first seen has not been written to for that long (every
 * write sets the mtime), so it only needs a second look, a tenth of the stable time later
 * (`confirmMs`), showing the same size and mtime. The second look is what still guards a
 * writer on a share whose clock runs behind ours: while it writes, the size or mtime changes
 * between the two looks and the file waits the whole stable time like any other.
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
  /** How long it must stay unchanged from `since`: stableMs, or confirmMs for a file old at first sight. */
  quietMs: number;
}

export class StabilityTracker {
  private readonly seen = new Map<string, Seen>();
  /** The second look's delay for files already quiet at first sight. */
  readonly confirmMs: number;

  constructor(private readonly stableMs: number) {
    this.confirmMs = Math.min(stableMs, Math.max(50, Math.round(stableMs / 10)));
  }

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
      let entry = prev;
      if (prev === undefined || prev.size !== f.size || prev.mtimeMs !== f.mtimeMs) {
        // Only at first sight: a file seen changing is being written, whatever its mtime says.
        const oldAtFirstSight = prev === undefined && now - f.mtimeMs >= this.stableMs;
        entry = {
          size: f.size,
          mtimeMs: f.mtimeMs,
          since: now,
          quietMs: oldAtFirstSight ? this.confirmMs : this.stableMs,
        };
        this.seen.set(f.name, entry);
      }
      const { since, quietMs } = entry as Seen;
      if (f.marked || now - since >= quietMs) ready.push(f.name);
      else nextDueAt = Math.min(nextDueAt ?? Infinity, since + quietMs);
    }
    for (const name of this.seen.keys()) if (!present.has(name)) this.seen.delete(name);
    return { ready, nextDueAt };
  }

  /** Forgets a file (taken, or gone): if the same name appears again it is watched afresh. */
  forget(name: string): void {
    this.seen.delete(name);
  }
}
