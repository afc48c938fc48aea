import { type Backoff, backoffDelay } from '../core/backoff.js';
import type { HealthState } from './health-server.js';
import { DEFAULT_SETTLE_WINDOW_MS, SettleList, type Settling, settleVerdict } from './settle-window.js';
import type { FileLook, Finished, ListedInput } from './sources/model.js';

/** What became of one claimed input; `requeued`: given back because it changed while processed. */
export type HandleResult = 'done' | 'failed' | 'held' | 'retry' | 'lost' | 'requeued';

/** An input this instance holds a claim on: being processed, or waiting for its retry (due at `dueAt`). */
export interface Held<I> {
  readonly input: I;
  attempts: number;
  dueAt: number;
  /** Its claim was taken over by another instance: nothing more is done with it here. */
  lost: boolean;
}

/** What the shell is to do. `claim` and `process` take a slot, given back (`free`) when their task ends. */
export type Decision<I> =
  | { kind: 'claim'; name: string }
  | { kind: 'process'; held: Held<I> }
  /** Kept claimed, tried again after `delayMs`. */
  | { kind: 'retry'; held: Held<I>; delayMs: number }
  /** Drop the claim; the input stays in processing/ for this or another instance to resume. */
  | { kind: 'release'; input: I }
  /** The claim is another instance's: drop what we keep of the input, touch nothing else. */
  | { kind: 'lost'; input: I }
  /** Seen but not taken yet (settling, or no free slot): said once per name. */
  | { kind: 'waiting'; name: string };

export interface SchedulerOptions {
  /** Inputs worked on at once (claimed and handled); default 1. */
  parallel?: number;
  /** The periodic scan is the source of truth; default 2000 ms. */
  scanIntervalMs?: number;
  /** Size and mtime unchanged this long means complete, where the source needs it; default 2000 ms. */
  stableMs?: number;
  needsStability: boolean;
  /** The backoff of inputs whose API or store was unavailable (core/backoff.ts); default 5 s … 5 min. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** How often processing/ is searched for inputs of crashed instances (besides at start); default 30 s. */
  orphanScanEveryMs?: number;
  /** How long a finished file is watched for a writer still writing into it (settle-window.ts); 0: not at all. Default 10 min. */
  settleWindowMs?: number;
  /** For the retries' jitter (tests pass their own). */
  random?: () => number;
}

/** Scans never come closer together than this, however many file-system events ask for one. */
const MIN_SCAN_GAP_MS = 20;
/** Finished files are looked at during scans, at most this often: each look is one lstat per file. */
const SETTLE_LOOK_GAP_MS = 1000;
/** At most this many finished files are looked at in one scan (a round trip each on a share); more take turns. */
const SETTLE_LOOKS_PER_SCAN = 500;

/** What is known of a name listed at the top of the drop location, until it is claimed or gone. */
interface Seen {
  size: number;
  mtimeMs: number;
  /** When this size and mtime were first seen, and how long they must stay so to be complete. */
  since: number;
  quietMs: number;
  /** When it was first seen ready (the pickup delay). */
  readyAt?: number;
  announced?: boolean;
  /** The last error claiming it, so it is logged once, not at every scan. */
  claimError?: string;
}

/**
 * The decisions of `htorder watch`, without I/O: told what scans found, what became of claims
 * and inputs, and the time, it says what to claim, process, retry, release or drop, and when
 * to look again; the shell (watcher.ts) carries them out. A slot that frees takes the next
 * input (retries first) without a scan. An input stays in `held` until finished, released or lost.
 */
export class WatchScheduler<I extends { readonly name: string }> {
  private readonly held = new Map<string, Held<I>>();
  private readonly names = new Map<string, Seen>();
  /** Names being claimed or processed now, one slot each. */
  private readonly slots = new Set<string>();
  /** Ready names of the last scan, oldest first, not yet taken. */
  private queue: string[] = [];
  private readonly stableMs: number;
  /** The second look's delay for a file already quiet at first sight. */
  private readonly confirmMs: number;
  private readonly parallel: number;
  private readonly retry: Backoff;
  /** Set by stop(). */
  stopping = false;
  /** A scan was asked for (file-system events). */
  private asked = false;
  private lastScanStart = -Infinity;
  private nextScanAt = 0;
  private nextOrphanScan = 0;
  /** When the next settling file will be stable: scan again then. */
  private settleDueAt: number | undefined;
  private scanFailures = 0;
  private lastScanAt: number | undefined;
  private processed = 0;
  /** Files this instance finished, watched for the settle window. */
  private readonly settling: SettleList;
  private lastSettleLook = -Infinity;

  constructor(private readonly opts: SchedulerOptions) {
    this.stableMs = opts.stableMs ?? 2000;
    this.confirmMs = Math.min(this.stableMs, Math.max(50, Math.round(this.stableMs / 10)));
    this.parallel = Math.max(1, Math.floor(opts.parallel ?? 1));
    this.retry = { baseMs: opts.retryMinMs ?? 5000, maxMs: opts.retryMaxMs ?? 300_000 };
    this.settling = new SettleList(opts.settleWindowMs ?? DEFAULT_SETTLE_WINDOW_MS);
  }

  /** Take nothing new; what is in flight finishes, and a retry is released instead. */
  stop(): void {
    this.stopping = true;
  }

  /** Scan soon (file-system events). */
  ask(): void {
    this.asked = true;
  }

  /**
   * Whether to scan now: at the interval, when a settling file is due, or when asked — but not
   * while ready inputs still wait for a slot (our own claims cause events, and a scan then would
   * only find what is queued). `orphans`: look in processing/ for inputs of crashed instances too.
   */
  scanNow(now: number): { orphans: boolean } | undefined {
    const asked = this.asked && this.queue.length === 0;
    const settled = this.settleDueAt !== undefined && now >= this.settleDueAt;
    if (now - this.lastScanStart < MIN_SCAN_GAP_MS || !(now >= this.nextScanAt || asked || settled)) return undefined;
    this.asked = false;
    this.lastScanStart = now;
    this.nextScanAt = now + (this.opts.scanIntervalMs ?? 2000);
    const orphans = now >= this.nextOrphanScan;
    if (orphans) this.nextOrphanScan = now + (this.opts.orphanScanEveryMs ?? 30_000);
    return { orphans };
  }

  /**
   * An input of a crashed instance, now claimed: held, due at once (`resumed`), unless stopping
   * or already held here (`release` its claim either way). An instance never claims what it
   * holds live (lease.ts), so one held here is one whose claim was lost and is not yet dropped
   * (maybe still in its slot): the new claim is given back, never kept unrenewed, and the input
   * is taken again by a later search, here or elsewhere.
   */
  resume(input: I): 'resumed' | 'release' {
    if (this.held.has(input.name) || this.stopping) return 'release';
    this.held.set(input.name, { input, attempts: 0, dueAt: 0, lost: false });
    return 'resumed';
  }

  /**
   * What a scan listed: the ready names become the queue, oldest first; the others are
   * announced as waiting, and the scan is due again when the first of them settles.
   */
  listed(listing: readonly ListedInput[], now: number): Decision<I>[] {
    this.lastScanAt = now;
    this.scanFailures = 0;
    this.settleDueAt = undefined;
    const present = new Set(listing.map((l) => l.name));
    for (const name of this.names.keys()) if (!present.has(name)) this.names.delete(name);
    const ready: ListedInput[] = [];
    const out: Decision<I>[] = [];
    for (const f of listing) {
      const seen = this.observe(f, now);
      if (!this.opts.needsStability || f.marked || now - seen.since >= seen.quietMs) {
        seen.readyAt ??= now;
        ready.push(f);
      } else {
        this.settleDueAt = Math.min(this.settleDueAt ?? Infinity, seen.since + seen.quietMs);
        if (!this.held.has(f.name)) out.push(...this.announce(f.name));
      }
    }
    ready.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : 1));
    this.queue = ready.map((f) => f.name).filter((name) => !this.slots.has(name));
    return out;
  }

  /**
   * A file is complete with a `NAME.done` marker, or when its size and mtime stood still for the
   * stable time by our clock (a share's skewed clock cannot make a half-written file look old).
   * One whose mtime is that old at first sight (a backlog) needs only a second look, `confirmMs`
   * later, which still catches a writer whose clock runs behind ours; a file seen changing
   * waits the whole stable time whatever its mtime says.
   */
  private observe(f: ListedInput, now: number): Seen {
    const prev = this.names.get(f.name);
    if (prev && prev.size === f.size && prev.mtimeMs === f.mtimeMs) return prev;
    const oldAtFirstSight = prev === undefined && now - f.mtimeMs >= this.stableMs;
    const quietMs = oldAtFirstSight ? this.confirmMs : this.stableMs;
    const seen: Seen = { ...prev, size: f.size, mtimeMs: f.mtimeMs, since: now, quietMs };
    this.names.set(f.name, seen);
    return seen;
  }

  /** An input was moved out of processing/ as it was processed: watched for the settle window. */
  finished(f: Finished, now: number): void {
    this.settling.add(f, now);
  }

  /** The finished files to look at in this scan: none within a second of the last look, at most 500 (the rest take turns). */
  settleLooks(now: number): Settling[] {
    if (this.settling.size === 0 || now - this.lastSettleLook < SETTLE_LOOK_GAP_MS) return [];
    this.lastSettleLook = now;
    return this.settling.live(now, SETTLE_LOOKS_PER_SCAN);
  }

  /**
   * What a look at finished file `s` found: what changed, when it grew or was written to since
   * it was processed (a writer holding it open went on writing): it is to be given back to the
   * top and processed again in full, the ledger keeping what was submitted. Undefined while it
   * is the same; one that went (moved away, replaced) is forgotten, as is one given back.
   */
  looked(s: Settling, look: FileLook | undefined): string | undefined {
    const verdict = settleVerdict(s, look);
    if (verdict.kind === 'same') return undefined;
    this.settling.drop(s);
    return verdict.kind === 'changed' ? verdict.what : undefined;
  }

  /** Looking at or giving back `s` failed: no longer watched. */
  settleFailed(s: Settling): void {
    this.settling.drop(s);
  }

  /** A scan failed; returns how many in a row. */
  scanFailed(): number {
    return ++this.scanFailures;
  }

  /**
   * Fills the free slots: inputs due for a retry (or resumed) first, then the queue, oldest
   * first. Inputs lost while they waited are dropped; the ready names left are announced.
   */
  fill(now: number): Decision<I>[] {
    const out: Decision<I>[] = [];
    for (const h of this.held.values()) {
      if (!h.lost || this.slots.has(h.input.name)) continue;
      this.held.delete(h.input.name);
      out.push({ kind: 'lost', input: h.input });
    }
    while (!this.stopping && this.slots.size < this.parallel) {
      const due = [...this.held.values()].find((h) => !this.slots.has(h.input.name) && h.dueAt <= now);
      if (due) {
        this.slots.add(due.input.name);
        out.push({ kind: 'process', held: due });
        continue;
      }
      const name = this.queue.shift();
      if (name === undefined) break;
      if (this.held.has(name) || this.slots.has(name)) continue; // an earlier input of this name is held
      this.slots.add(name);
      out.push({ kind: 'claim', name });
    }
    for (const name of this.queue) out.push(...this.announce(name));
    return out;
  }

  /**
   * The claim of `name` ended: `input` is held and processed in the same slot (also when a stop
   * came meanwhile: it is in flight now), or undefined when another instance had it.
   * `waitedMs`: from ready to claimed.
   */
  claimed(name: string, input: I | undefined, now: number): { held: Held<I>; waitedMs?: number } | undefined {
    // Taken (or another instance's): a file of this name that appears again is watched afresh.
    const readyAt = this.names.get(name)?.readyAt;
    this.names.delete(name);
    if (input === undefined) return undefined;
    const held: Held<I> = { input, attempts: 0, dueAt: 0, lost: false };
    this.held.set(name, held);
    return { held, ...(readyAt === undefined ? {} : { waitedMs: now - readyAt }) };
  }

  /** Claiming `name` threw; true the first time with this message (to log it once, not at every scan). */
  claimFailed(name: string, message: string): boolean {
    const seen = this.names.get(name);
    if (seen?.claimError === message) return false;
    if (seen) seen.claimError = message;
    return true;
  }

  /**
   * handle() ended with `result`: kept for a retry with the backoff (unless lost or stopping),
   * else no longer held — released when it was to be retried, dropped when it was lost.
   */
  handled(held: Held<I>, result: HandleResult, now: number): Decision<I> | undefined {
    if (result === 'retry' && !held.lost && !this.stopping) {
      held.attempts += 1;
      const delayMs = backoffDelay(held.attempts, this.retry, this.opts.random);
      held.dueAt = now + delayMs;
      return { kind: 'retry', held, delayMs };
    }
    this.held.delete(held.input.name);
    if (result === 'done' || result === 'failed' || result === 'held') this.processed += 1;
    if (result === 'lost' || held.lost) return { kind: 'lost', input: held.input };
    return result === 'retry' ? { kind: 'release', input: held.input } : undefined;
  }

  /** The slot of `name` is free again (its task ended). */
  free(name: string): void {
    this.slots.delete(name);
  }

  /** The held inputs whose claims are to be renewed now. */
  renewals(): Held<I>[] {
    return [...this.held.values()].filter((h) => !h.lost);
  }

  /** A renewal said the claim is another instance's; true the first time (to log it once). */
  markLost(held: Held<I>): boolean {
    if (held.lost) return false;
    held.lost = true;
    return true;
  }

  /** When to look again: the next scan, or the next retry while a slot is free (never sooner than a scan may be). */
  wakeAt(): number {
    const askedAt = this.asked && this.queue.length === 0 ? 0 : Infinity;
    let at = Math.max(
      Math.min(this.nextScanAt, this.settleDueAt ?? Infinity, askedAt),
      this.lastScanStart + MIN_SCAN_GAP_MS,
    );
    if (this.slots.size < this.parallel)
      for (const h of this.held.values()) if (!this.slots.has(h.input.name)) at = Math.min(at, h.dueAt);
    return at;
  }

  /** At the end, every slot free: the inputs whose claims are to be released (the lost ones are not ours). */
  drain(): I[] {
    const release = [...this.held.values()].filter((h) => !h.lost).map((h) => h.input);
    this.held.clear();
    return release;
  }

  /** What /healthz says of the loop at `location` (the gauges read it too). */
  health(location: string): HealthState & { inFlight: number; inFlightInputs: string[]; waitingRetry: number } {
    // Held and in a slot: being processed (a slot whose claim is under way holds nothing yet).
    const inFlightInputs = [...this.held.keys()].filter((name) => this.slots.has(name));
    return {
      status: this.stopping ? 'stopping' : this.scanFailures >= 3 ? 'failing' : 'ok',
      location,
      lastScanAt: this.lastScanAt === undefined ? null : new Date(this.lastScanAt).toISOString(),
      inFlight: inFlightInputs.length,
      inFlightInputs,
      parallel: this.parallel,
      waitingRetry: this.held.size - inFlightInputs.length,
      queued: this.queue.length,
      processed: this.processed,
    };
  }

  private announce(name: string): Decision<I>[] {
    const seen = this.names.get(name);
    if (!seen || seen.announced) return [];
    seen.announced = true;
    return [{ kind: 'waiting', name }];
  }
}
