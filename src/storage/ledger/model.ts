import { acquireLease, holdLease, type Lease, LeaseBusyError, type LeaseStore, type LeaseWait } from '../lease.js';

/**
 * Exactly-once bookkeeping (docs/architecture.md#exactly-once). Per account and orderNumber the ledger records
 * the intent BEFORE `POST /Jobs` and the outcome after. Every decision to send is taken
 * while holding that order's lock, so two processes (or two machines sharing a bucket)
 * never both send the same order.
 */

export interface LedgerKey {
  /** The account's identity (account-key.ts): region + account id; orders are unique per account, never across accounts. */
  account: string;
  orderNumber: string;
}

/**
 * - `intent`: about to send, or sent without a known outcome (crash, timeout, reset, 5xx).
 *   Must be settled by an exact-match search of `/Jobs/active` before anything is sent again.
 * - `submitted`: the API created the job; `jobNumber` is known. Never sent again.
 * - `failed`: the API refused it or it was never sent; nothing exists server-side. May be sent
 *   again by a later run.
 */
export type LedgerState = 'intent' | 'submitted' | 'failed';

export interface LedgerLine {
  customerReference: string | null;
  quantity: number;
  newAssetSku: string | null;
  needsArtworkToBeUploaded: boolean;
}

export interface LedgerEntry {
  ledgerVersion: 1;
  account: string;
  orderNumber: string;
  /** sha256 of the manifest entry as written (job-hash.ts, not the resolved request): a changed entry is detected, not resent. */
  payloadHash: string;
  state: LedgerState;
  /** How many times a POST was (or may have been) sent. */
  attempts: number;
  intentAt: string;
  outcomeAt?: string;
  jobNumber?: number;
  dateDue?: string | null;
  totalJobCost?: number;
  lines?: LedgerLine[];
  /** How the outcome was learnt: the create response, or a search after an unknown outcome. */
  settledBy?: 'response' | 'search';
  /** Last error, already redacted. */
  error?: string;
  /** Which input asked for it (for people reading the ledger). */
  input?: { file: string; sha256: string };
  /**
   * The declaratively changeable fields as the manifest had them when they were last
   * sent (at submission, or by a later PATCH). A later run compares the manifest against these,
   * so only the user's own edits become a PATCH; changes made in the dashboard are not undone.
   */
  patchable?: LedgerPatchable;
  /** When a cancel was sent (its outcome still unknown until cancelledAt is set). */
  cancelRequestedAt?: string;
  /** When the API confirmed the cancel (204). */
  cancelledAt?: string;
  /**
   * Read from the compact index of old orders (docs/reliability.md#how-long-the-ledger-keeps-what):
   * its state, job number, fingerprint, baseline of changes and cancel are kept; lines, input and
   * error are not. Never written: a rewrite of the order is a whole entry again.
   */
  folded?: true;
}

/** Manifest values of the fields a submitted job may still change (names as in the manifest). */
export interface LedgerPatchable {
  description?: string;
  orderComment?: string;
  orderNumber?: string;
  mustDate?: boolean;
  dateDue?: string;
}

/**
 * What a ledger knows about one account as a whole (`<account>/.account` beside its entries).
 * Its presence means the ledger vouches for the account: every order htorder created for it
 * since `vouchedSince` went through this ledger, so an order it has never seen was never
 * created. A ledger without it (new, moved, another machine's) vouches for nothing: each order
 * it has not seen is searched on the account before its first create.
 */
export interface LedgerAccount {
  ledgerVersion: 1;
  account: string;
  /** When the first run of this ledger for the account finished checking its orders. */
  vouchedSince: string;
  /** Old ledgers (htorder 0.1's `./.htorder/`, by real path) whose entries were read into this one. */
  imported?: string[];
  /** The newest job number of the account a look for other writers saw: the next look stops there. */
  checkedThrough?: number;
  /**
   * A job another writer made on the account after `vouchedSince` (pipeline/other-writers.ts):
   * from then on the ledger vouches for nothing, whatever the rest of this record says.
   */
  otherWriter?: { jobNumber: number; orderNumber: string | null; seenAt: string };
}

/**
 * Proof that the caller still holds the lock; checked right before anything irreversible. Given
 * to a ledger's `read` and `write` of the order, it is also how the ledger learns that they come
 * under the lock (heldLock).
 */
export interface LockGuard {
  /** Throws if the lock was lost (e.g. the process stalled past the lease and another took it). */
  assertHeld(): void;
}

export interface LedgerStore {
  /** Runs `fn` holding the exclusive, cross-process lock on `key`; waits for another holder. */
  withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T>;
  /**
   * `guard`: the order's own lock is held (withLock's guard), and what is read is what the next
   * write under it checks is still there. Without it, a read as anyone's.
   */
  read(key: LedgerKey, options?: { guard?: LockGuard }): Promise<LedgerEntry | undefined>;
  /**
   * Atomic: a reader sees the previous entry or this one, never a torn file. Intents are
   * always durable (on disk before the POST they announce); `durable: false` is for outcomes,
   * whose loss in a power cut leaves the intent, which the next run settles by search.
   * `guard`: the order's lock withLock holds (the write refuses to land once the lock was lost or
   * the entry changed since its holder saw it: LockLostError); null: written under no lock (a
   * tool, a test), which throws while this process holds the order's lock (heldLock).
   */
  write(entry: LedgerEntry, options: LedgerWrite): Promise<void>;
  /**
   * Every entry, optionally of one account (used by `htorder track` and imports); `folded:
   * false` leaves out the orders folded into the compact index of old orders.
   */
  entries(account?: string, options?: LedgerEntries): AsyncIterable<LedgerEntry>;
  /** The account's record, if this ledger vouches for the account. */
  readAccount(account: string): Promise<LedgerAccount | undefined>;
  writeAccount(record: LedgerAccount): Promise<void>;
  /**
   * An account-wide note beside the entries (the guardrails' approvals, daily spend and content
   * index, guard-notes.ts). `name` is a plain name starting with `.`, so it is never an entry's.
   */
  readNote<T>(account: string, name: string): Promise<T | undefined>;
  /** Atomic like `write`; durable unless `durable: false`. */
  writeNote(account: string, name: string, value: unknown, options?: { durable?: boolean }): Promise<void>;
  /** Removes a note; one already gone is fine. */
  deleteNote(account: string, name: string): Promise<void>;
  /** The names of the account's notes that start with `prefix`. */
  listNotes(account: string, prefix: string): Promise<string[]>;
  /**
   * Runs `fn` holding the account-wide lock `name` (a plain name): the same lease as an
   * order's lock, shared by every process (or machine, for a bucket) using this ledger.
   */
  withAccountLock<T>(account: string, name: string, fn: (guard: LockGuard) => Promise<T>): Promise<T>;
  /**
   * Reads the note, asks `change` for its next value (undefined: left as it is) and writes it,
   * as one step against every other update of the note: a database in one transaction; a
   * file or bucket ledger under the account lock `lock` (NoteUpdates; without one, read and
   * written as two steps, where an update of another process made in between is lost: it only
   * weakens the content index). `change` may run again when the database was lost half-way:
   * it must depend only on what it is given.
   */
  updateNote<T>(
    account: string,
    name: string,
    change: (current: T | undefined) => Promise<T | undefined>,
    options?: NoteUpdate,
  ): Promise<void>;
  /** Lets go of what the ledger holds open (a database's connections); absent when nothing is. */
  close?(): Promise<void>;
  /**
   * The ledger's own id: random, made once and kept in the ledger itself (ledger-id.ts), the
   * same for every process that uses this ledger and different for any other. A watcher marks
   * its drop location with it: watchers of one location must share one ledger.
   */
  ledgerId(): Promise<string>;
  /**
   * Keeps the account's share of the ledger bounded (docs/reliability.md#how-long-the-ledger-keeps-what):
   * folds entries older than `policy.foldBefore` into the compact index and removes the notes
   * `policy.notes` say have expired. Absent where a store has nothing to fold.
   */
  compact?(account: string, policy: CompactPolicy): Promise<CompactResult>;
}

export interface LedgerEntries {
  /** False: the orders folded into the compact index of old orders are left out. */
  folded?: boolean;
  /**
   * Told of each entry that cannot be read (LedgerEntryUnreadableError), which the listing then
   * skips; without it the listing throws there.
   */
  unreadable?: OnUnreadable;
}

/** Told of an entry that cannot be read, which a listing then leaves out (LedgerEntries.unreadable). */
export type OnUnreadable = (err: LedgerEntryUnreadableError) => void;

/**
 * What a listing does with a failed read of one entry: an entry that cannot be read is told to
 * `options.unreadable` (the listing skips it); anything else, or no one to tell, is thrown.
 */
export function skipUnreadable(err: unknown, options: LedgerEntries): void {
  if (!(err instanceof LedgerEntryUnreadableError) || !options.unreadable) throw err;
  options.unreadable(err);
}

export interface LedgerWrite {
  /** The order's lock the write comes under (withLock's guard), or null for none. */
  guard: LockGuard | null;
  /** Fsynced (a file ledger); an intent always is. Default true. */
  durable?: boolean;
}

export interface NoteUpdate {
  /** The account lock a file or bucket ledger updates the note under. */
  lock?: string;
  /** Fsynced (a file ledger); default true. */
  durable?: boolean;
}

type NoteChange = (current: unknown) => Promise<unknown>;

/** Updates of one note gathered to be read, changed and written together. */
interface NoteBatch {
  changes: { change: NoteChange; failed?: unknown }[];
  durable: boolean;
  written: Promise<void>;
}

/**
 * updateNote for a ledger without transactions: read, change and write, under `options.lock`
 * when named. Updates of one note asked for while one of them is under way wait for it and are
 * then made together, each change given what the one before it made, in one read and one write:
 * as if made one after another, without a write each. Jobs of one content sent side by side (a
 * run's orders to one address) would otherwise each read the content index's entry and replace
 * it, each losing what another added meanwhile, and on a folder freeing the file each race
 * replaces (what makes the next files made beside it dearer, FolderLedger.keepReplaced).
 * A change that fails fails its own update only.
 */
export class NoteUpdates {
  /** Per note and lock: the batch being made, and the one gathering updates meanwhile. */
  private readonly notes = new Map<string, { running: NoteBatch; next?: NoteBatch }>();

  constructor(private readonly store: LedgerStore) {}

  update<T>(
    account: string,
    name: string,
    change: (current: T | undefined) => Promise<T | undefined>,
    options: NoteUpdate = {},
  ): Promise<void> {
    const key = JSON.stringify([account, name, options.lock ?? null]);
    const member = { change: change as NoteChange, failed: undefined as unknown };
    const durable = options.durable !== false;
    const note = this.notes.get(key);
    let batch: NoteBatch;
    if (note) {
      batch = note.next ??= this.launch(key, account, name, options.lock, note.running.written);
    } else {
      batch = this.launch(key, account, name, options.lock, Promise.resolve());
      this.notes.set(key, { running: batch });
    }
    batch.changes.push(member);
    batch.durable ||= durable;
    return batch.written.then(() => {
      if (member.failed !== undefined) throw member.failed;
    });
  }

  /**
   * A batch made once `before` (the running batch's write) is settled, failed or not: its
   * members join until then.
   */
  private launch(
    key: string,
    account: string,
    name: string,
    lock: string | undefined,
    before: Promise<void>,
  ): NoteBatch {
    const batch: NoteBatch = { changes: [], durable: false, written: Promise.resolve() };
    batch.written = before
      .catch(() => undefined)
      .then(() => {
        const note = this.notes.get(key);
        if (note?.next === batch) {
          note.running = batch;
          note.next = undefined;
        }
        return this.make(batch, account, name, lock);
      });
    this.settle(key, batch);
    return batch;
  }

  /** Forgets the note once its last batch is written and none gathers behind it. */
  private settle(key: string, batch: NoteBatch): void {
    const done = (): void => {
      const note = this.notes.get(key);
      if (note?.running === batch && !note.next) this.notes.delete(key);
    };
    batch.written.then(done, done);
  }

  private async make(batch: NoteBatch, account: string, name: string, lock: string | undefined): Promise<void> {
    const update = async (): Promise<void> => {
      let value = await this.store.readNote<unknown>(account, name);
      let changed = false;
      for (const member of batch.changes) {
        try {
          const next = await member.change(value);
          if (next === undefined) continue;
          value = next;
          changed = true;
        } catch (err) {
          member.failed = err ?? new Error('a note update failed');
        }
      }
      if (changed) await this.store.writeNote(account, name, value, { durable: batch.durable });
    };
    if (lock === undefined) return update();
    await this.store.withAccountLock(account, lock, update);
  }
}

/** What a compaction may let go of; times are the calendar clock's (ms). */
export interface CompactPolicy {
  /** Entries decided (submitted or failed) before this are folded; none when undefined. An intent never is. */
  foldBefore?: number;
  /** Replaced versions of entries and notes a file ledger kept (keptName) since before this are removed. */
  keptBefore?: number;
  /** Notes whose name starts with `prefix` are removed once `at(value)` (their last use) is before `before`. */
  notes: readonly { prefix: string; before: number; at(value: unknown): number | undefined }[];
}

export interface CompactResult {
  /** Entries folded into the compact index. */
  folded: number;
  /** Notes removed. */
  notes: number;
  /** Entries and notes moved out of an older layout. */
  moved: number;
  /** Temporaries of atomic writes cut short (a killed writer's) removed; a file ledger's. */
  temporaries?: number;
  /** Replaced versions removed (CompactPolicy.keptBefore); a file ledger's. */
  kept?: number;
}

/**
 * Runs `fn` holding the order's lock, a lease (lease.ts) named `lockName`: waits for another
 * holder, renews it while held, and gives `fn` the guard that checks it right before anything
 * irreversible. The guard is also what `fn` hands the ledger's read and write of the order, so
 * they know they come under the lock (heldLock).
 */
export async function withOrderLock<T, L extends Lease>(
  leases: LeaseStore<L>,
  lockName: string,
  key: LedgerKey,
  wait: LeaseWait,
  fn: (guard: LockGuard) => Promise<T>,
): Promise<T> {
  const order = JSON.stringify(key.orderNumber);
  let lease: L;
  try {
    lease = await acquireLease(leases, lockName, wait);
  } catch (err) {
    if (!(err instanceof LeaseBusyError)) throw err;
    throw new LockTimeoutError(`order ${order} is locked by another htorder process (${err.message})`);
  }
  const guard: LockGuard = {
    assertHeld() {
      // Lost: another process took the lock over (this one stalled past its lease, or someone
      // removed the lock); nothing irreversible may be done under it any more.
      const lost = lease.lost();
      if (lost) throw new LockLostError(`lost the ledger lock of order ${order}: ${lost.message}`);
    },
  };
  const held: Holding = { leases, lockName, lock: { lease, guard, seen: undefined }, released: false };
  holdings.set(guard, held);
  const names = heldNames(leases);
  names.set(lockName, (names.get(lockName) ?? 0) + 1);
  try {
    return await holdLease(leases, lease, () => fn(guard));
  } finally {
    held.released = true;
    const n = (names.get(lockName) ?? 1) - 1;
    if (n > 0) names.set(lockName, n);
    else names.delete(lockName);
  }
}

/**
 * A lock held by withOrderLock, as a ledger's write under it needs it: a write that arrives
 * after the lease ran out and another process took the order over must not set back what that
 * one recorded since. Each ledger checks what its store lets it: that the lease is still this
 * holder's (a database: in the write's own statement) and that the entry is still as this holder
 * last saw it (a bucket: If-Match its ETag); a folder, both, right before its rename.
 */
export interface HeldLock<L extends Lease = Lease> {
  readonly lease: L;
  readonly guard: LockGuard;
  /**
   * The order's entry as this holder last read or wrote it, in its store's terms (a bucket's
   * ETag, a file's identity); null: there was none; undefined: not looked at yet.
   */
  seen: string | null | undefined;
}

/** What withOrderLock keeps of a lock it holds, found by its guard. */
interface Holding {
  leases: LeaseStore<Lease>;
  lockName: string;
  lock: HeldLock;
  /** withOrderLock returned: the guard stands for no lock any more. */
  released: boolean;
}

/**
 * The guards withOrderLock handed out: a guard is the capability to write under its lock, and
 * only a guard of this module leads to one. Passed along explicitly rather than found in an
 * async context, whose promise hooks every promise of the process would pay for.
 */
const holdings = new WeakMap<LockGuard, Holding>();

/** Per lease store, how many holders of each lock name this process has now (withOrderLock). */
const holders = new WeakMap<LeaseStore<Lease>, Map<string, number>>();

function heldNames(leases: LeaseStore<Lease>): Map<string, number> {
  let names = holders.get(leases);
  if (names === undefined) {
    names = new Map();
    holders.set(leases, names);
  }
  return names;
}

/**
 * The lock `lockName` of `leases` that `guard` stands for, for a ledger's read or write of the
 * order under it. A guard of another lock (another order, another ledger) or of a lock already
 * let go is a mistake of the caller's, and throws: the write would otherwise skip the checks of
 * the lock it does hold, or check one that is not its own. null (written under no lock) throws
 * while this process holds that lock: a guard forgotten on the way to the write must not
 * silently skip the check of a late write.
 */
export function heldLock<L extends Lease>(
  leases: LeaseStore<L>,
  lockName: string,
  guard: LockGuard | null | undefined,
): HeldLock<L> | undefined {
  // The options are required by type; a caller in plain JavaScript may still leave them out.
  if (guard === undefined)
    throw new TypeError(
      `written to ${lockName} without { guard }: pass the guard withLock gave, or null for a write under no lock`,
    );
  if (guard === null) {
    if (holders.get(leases)?.has(lockName))
      throw new Error(`written without the guard of ${lockName}, which this process holds: pass the guard`);
    return undefined;
  }
  const h = holdings.get(guard);
  if (!h) throw new Error(`given for ${lockName} a guard that no lock handed out`);
  if (h.leases !== leases || h.lockName !== lockName) {
    const other = h.leases === leases ? h.lockName : `${h.lockName} of another ledger`;
    throw new Error(`given for ${lockName} the guard of another lock (${other})`);
  }
  if (h.released) throw new Error(`given for ${lockName} the guard of a lock already let go`);
  // Its lease came from this very store, so it is an `L`.
  return h.lock as HeldLock<L>;
}

export class LockLostError extends Error {
  override name = 'LockLostError';
}

export class LockTimeoutError extends Error {
  override name = 'LockTimeoutError';
}

/**
 * An order's entry that exists but cannot be read or parsed (zero-filled after a power cut,
 * cut short, edited by hand, or refused by the file system). It is never taken for "no entry":
 * that would let the order be sent again. The order it belongs to is not sent until the entry
 * is repaired or removed (docs/troubleshooting.md); every other order goes on.
 */
export class LedgerEntryUnreadableError extends Error {
  override name = 'LedgerEntryUnreadableError';

  constructor(
    /** Where the entry is: a file's path, or a bucket's key. */
    readonly path: string,
    /** Why it cannot be used: `not JSON`, or the file system's code (`EACCES`, `EISDIR`). */
    readonly why: string,
    options?: { cause?: unknown },
  ) {
    super(`the ledger entry ${path} cannot be read (${why})`, options);
  }
}

/**
 * The entry of `key` as a look without the order's lock reads it, with an entry that cannot be
 * read answered as `unreadable` (never as none): for a look that decides nothing about sending
 * the order, which is decided, and refused, by the reads under its lock.
 */
export async function lookAtEntry(
  ledger: Pick<LedgerStore, 'read'>,
  key: LedgerKey,
): Promise<LedgerEntry | undefined | 'unreadable'> {
  try {
    return await ledger.read(key);
  } catch (err) {
    if (err instanceof LedgerEntryUnreadableError) return 'unreadable';
    throw err;
  }
}

/**
 * What a failed read of the entry at `path` means: the entry itself refused (its permissions, a
 * folder or a link where the file should be) is LedgerEntryUnreadableError, its order failed
 * alone; anything else (EIO, ESTALE, EMFILE: a share gone, a process out of files) is the store
 * unavailable, the error as it is, and nothing is decided (exit 3, retried later).
 */
export function entryReadError(path: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && !ENTRY_OWN_CODES.has(code)) return err instanceof Error ? err : new Error(String(err));
  return new LedgerEntryUnreadableError(path, unreadableWhy(err), { cause: err });
}

/** The read errors that come from the entry's own file, not from the store around it. */
const ENTRY_OWN_CODES = new Set(['EACCES', 'EPERM', 'EISDIR', 'ELOOP']);

/** The reason of an unreadable entry: the file system's code, or `not JSON` for what parses as none. */
export function unreadableWhy(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'not JSON';
}
