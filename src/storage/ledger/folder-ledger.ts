import {
  type BigIntStats,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  openSync,
  readFileSync,
  statSync,
} from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { fsyncAsync, writeFileAtomic, writeWhole } from '../atomic-write.js';
import { BoundedMemo } from '../../core/bounded-memo.js';
import { FolderLeases } from '../folder-lease.js';
import { nameOwnerDead, newOwnerId } from '../lease.js';
import { compactAccount } from './folder-compact.js';
import { entryOf, foldedIn, foldedOrders } from './folder-fold.js';
import { fileLedgerId } from './ledger-id.js';
import {
  FOLDED,
  isEntryName,
  isKeptName,
  keptName,
  LAYOUT,
  layoutText,
  NOTES,
  ORDERS,
  orderShard,
  parsedEntry,
  readEntry,
  readJson,
  readText,
  shardedNote,
  unlessMissing,
} from './folder-layout.js';
import {
  type CompactPolicy,
  type CompactResult,
  entryReadError,
  type HeldLock,
  heldLock,
  type LedgerAccount,
  type LedgerEntry,
  type LedgerEntries,
  type LedgerKey,
  type LedgerStore,
  type LedgerWrite,
  skipUnreadable,
  type LockGuard,
  LockLostError,
  type NoteUpdate,
  NoteUpdates,
  withOrderLock,
} from './model.js';
import { noteName, safeName } from './safe-name.js';

export interface FolderLedgerOptions {
  /** A lock not refreshed for this long belongs to a dead process and may be taken over. */
  staleMs?: number;
  /** How long to wait for another live holder before giving up. */
  waitMs?: number;
  /** Mode of the folders it creates (before the umask); default the umask's. */
  mode?: number;
  /** The time its locks are judged by (tests pass their own; never the calendar clock of core/clock.ts). */
  now?: () => number;
  /** False: a replaced version is freed at once, as the file system does by itself (tests compare the two). */
  keepReplaced?: boolean;
}

/**
 * Entries and notes are read (and an entry's identity looked at) with this thread's own system
 * calls, as the leases are (folder-lease.ts): each is a small file read a few times a job, and a
 * trip through libuv's pool costs several times the read it carries (`npm run bench`, CPU a job).
 * Writes stay on the pool: a rename over a file can make the file system write the new file's
 * data first (ext4's auto_da_alloc), which would hold the event loop. What walks every entry
 * (compact, entries) reads on the pool too, so it never holds the loop long.
 */
const ON_THIS_THREAD = true;

/** Waiting for an order another process holds: its lock is held for one submission. */
const LOCK_BACKOFF = { baseMs: 25, maxMs: 500 };
/** How long an account found in the flat layout of older versions is taken to stay so before looking again. */
const LEGACY_RECHECK_MS = 60_000;

/**
 * The ledger as one JSON file per (account, orderNumber) under `<stateDir>/ledger/<account>/`,
 * in shards (`orders/<3 hex digits of the order number's hash>/`) so no folder grows with the
 * orders; locked by the folder lease `<entry>.json.lock` beside it (one token per process and
 * account, in `.locks/`) and written by writeFileAtomic (docs/architecture.md#exactly-once).
 * Old orders are folded into each shard's compact index (`.folded`, folder-fold.ts) by
 * `compact`. An account folder of an older version (flat: every entry and content note beside
 * the account's record, no `.layout`) is read as it is, and moved into shards by `compact`.
 */
export class FolderLedger implements LedgerStore {
  private readonly root: string;
  /** Folders known to exist: saves a mkdir per write on the hot path. */
  private readonly made = new Set<string>();
  /**
   * Entry paths by account and order number: a job's entry is looked up three or four times
   * (look-up, lock, read, write), and its path is three hashes, two name clean-ups and a join.
   */
  private readonly paths = new BoundedMemo<string, BoundedMemo<string, string>>(64);
  /** Account folders by account, looked at by every call as its entries' paths are. */
  private readonly dirs = new BoundedMemo<string, string>(64);
  /** A folder being made, or an account's layout being looked at: the callers meanwhile wait for that one look. */
  private readonly pending = new Map<string, Promise<unknown>>();
  /** Account folders by whether they may still hold the flat layout, and when that was looked at. */
  private readonly legacy = new Map<string, { flat: boolean; at: number }>();
  private readonly locks: FolderLeases;
  private readonly noteUpdates = new NoteUpdates(this);
  /** Per lock held, the identity of the entry its holder wrote last (write appends to that file). */
  private readonly wrote = new WeakMap<HeldLock, string>();
  /** How many versions this ledger has kept (keptName's n); -1 once the file system refused a hard link. */
  private kept: number;

  constructor(
    stateDir: string,
    private readonly options: FolderLedgerOptions = {},
  ) {
    this.root = join(stateDir, 'ledger');
    this.kept = options.keepReplaced === false ? -1 : 0;
    this.locks = new FolderLeases({
      owner: newOwnerId(),
      leaseMs: Math.max(2000, options.staleMs ?? 10_000),
      // One token per account, wherever in it the lock is (the account folder or a shard).
      tokenDir: (dir) => join(basename(dirname(dir)) === ORDERS ? dirname(dirname(dir)) : dir, '.locks'),
      mode: options.mode,
      survivesHolder: true,
      now: options.now,
    });
  }

  async readAccount(account: string): Promise<LedgerAccount | undefined> {
    return readJson<LedgerAccount>(join(this.dirOf(account), '.account'));
  }

  async writeAccount(record: LedgerAccount): Promise<void> {
    await this.ensureDir(record.account);
    await writeFileAtomic(join(this.dirOf(record.account), '.account'), `${JSON.stringify(record, null, 2)}\n`, {
      durable: true,
    });
  }

  async readNote<T>(account: string, name: string): Promise<T | undefined> {
    await this.turn();
    const path = this.notePath(account, name);
    const found = await readJson<T>(path, ON_THIS_THREAD);
    if (found !== undefined || !shardedNote(name) || !(await this.flat(account))) return found;
    // Moved from the flat layout between the two reads: found where it went.
    return (await readJson<T>(join(this.dirOf(account), name), ON_THIS_THREAD)) ?? readJson<T>(path, ON_THIS_THREAD);
  }

  async writeNote(account: string, name: string, value: unknown, options: { durable?: boolean } = {}): Promise<void> {
    const path = this.notePath(account, name);
    await this.ensureDir(account);
    await this.ensureFolder(dirname(path));
    await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, {
      durable: options.durable !== false,
      beforeRename: async () => {
        if (statSync(path, { throwIfNoEntry: false })) this.keepReplaced(path);
      },
    });
  }

  async deleteNote(account: string, name: string): Promise<void> {
    await rm(this.notePath(account, name), { force: true });
    if (shardedNote(name)) await rm(join(this.dirOf(account), name), { force: true });
  }

  async listNotes(account: string, prefix: string): Promise<string[]> {
    const dir = this.dirOf(account);
    const flat = (await unlessMissing(readdir(dir), [])).filter((n) => n.startsWith(noteName(prefix)));
    const shards = shardedNote(prefix)
      ? await Promise.all(
          (await unlessMissing(readdir(join(dir, NOTES)), [])).map((s) =>
            unlessMissing(readdir(join(dir, NOTES, s)), []),
          ),
        )
      : [];
    const names = new Set([...flat, ...shards.flat().filter((n) => n.startsWith(prefix))]);
    return [...names].filter((n) => !n.endsWith('.tmp') && !n.endsWith('.lock') && !isKeptName(n)).sort();
  }

  updateNote<T>(
    account: string,
    name: string,
    change: (current: T | undefined) => Promise<T | undefined>,
    options?: NoteUpdate,
  ): Promise<void> {
    return this.noteUpdates.update(account, name, change, options);
  }

  async withAccountLock<T>(account: string, name: string, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    await this.ensureDir(account);
    const wait = { waitMs: this.options.waitMs ?? 120_000, backoff: LOCK_BACKOFF };
    const lock = join(this.dirOf(account), `${noteName(name)}.lock`);
    return withOrderLock(this.locks, lock, { account, orderNumber: name }, wait, fn);
  }

  /** Kept as `<stateDir>/ledger-id`. */
  ledgerId(): Promise<string> {
    return fileLedgerId(join(dirname(this.root), 'ledger-id'));
  }

  /**
   * Lets the event loop run before a read on this thread, as a read on the pool would: a loop of
   * reads then never holds the loop, and work waiting on the pool (a compaction) keeps its turn.
   * A turn costs a small part of a trip through the pool.
   */
  private async turn(): Promise<void> {
    await setImmediate();
  }

  private dirOf(account: string): string {
    let dir = this.dirs.get(account);
    if (dir === undefined) {
      dir = join(this.root, safeName(account));
      this.dirs.set(account, dir);
    }
    return dir;
  }

  private pathOf(key: LedgerKey): string {
    let paths = this.paths.get(key.account);
    if (paths === undefined) {
      paths = new BoundedMemo(4096);
      this.paths.set(key.account, paths);
    }
    let path = paths.get(key.orderNumber);
    if (path === undefined) {
      path = join(this.dirOf(key.account), ORDERS, orderShard(key.orderNumber), `${safeName(key.orderNumber)}.json`);
      paths.set(key.orderNumber, path);
    }
    return path;
  }

  /** Where an older version kept the entry: beside the account's record. */
  private flatPathOf(key: LedgerKey): string {
    return join(this.dirOf(key.account), `${safeName(key.orderNumber)}.json`);
  }

  private notePath(account: string, name: string): string {
    const dir = this.dirOf(account);
    const sharded = shardedNote(noteName(name));
    return sharded ? join(dir, NOTES, sharded, name) : join(dir, name);
  }

  async withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    const path = this.pathOf(key);
    await this.ensureDir(key.account);
    await this.ensureFolder(dirname(path));
    const wait = { waitMs: this.options.waitMs ?? 120_000, backoff: LOCK_BACKOFF };
    return withOrderLock(this.locks, `${path}.lock`, key, wait, fn);
  }

  /**
   * The live entry, else (an account still in the flat layout) the flat one, else the order in
   * its shard's compact index. Each is looked at after the one before it could have moved
   * there: compaction writes the index before it removes the entry, and moves a flat entry
   * into its shard with one rename.
   */
  async read(key: LedgerKey, options: { guard?: LockGuard } = {}): Promise<LedgerEntry | undefined> {
    await this.turn();
    const path = this.pathOf(key);
    const held = options.guard && heldLock(this.locks, `${path}.lock`, options.guard);
    let live: LedgerEntry | undefined;
    if (held) {
      // Under the order's lock: what was read is what the next write checks is still there.
      const found = readIdentified<LedgerEntry>(path);
      held.seen = found?.identity ?? null;
      live = found?.value;
    } else {
      live = await readEntry<LedgerEntry>(path, ON_THIS_THREAD);
    }
    if (live) return live;
    if (await this.flat(key.account)) {
      const moved =
        (await readEntry<LedgerEntry>(this.flatPathOf(key), ON_THIS_THREAD)) ??
        (await readEntry<LedgerEntry>(path, ON_THIS_THREAD));
      if (moved) return moved;
    }
    const folded = foldedIn(await readText(join(dirname(path), FOLDED), ON_THIS_THREAD), key.orderNumber);
    return folded && entryOf(key.account, folded);
  }

  /**
   * Under the order's lock (withLock's guard) the entry is written only if, right before the
   * write lands, the lock is still this holder's and the entry is still the file this holder
   * last read or wrote: a write held up past the lease (a process stalled, a share that hung)
   * comes after another process took the order over, and must not set back what that one
   * recorded since. It fails instead, as a lost lock does (LockLostError). A file has no
   * compare-and-swap: what remains is the moment between that look and the write
   * (docs/architecture.md#the-folder-ledger).
   *
   * An entry is one line of JSON renamed into place; the next write of the holder that wrote it
   * (an intent's outcome) is appended to the same file as a line of its own (parseEntry), so an
   * order's outcome costs no new file.
   */
  async write(entry: LedgerEntry, options: LedgerWrite): Promise<void> {
    const { folded: _folded, ...whole } = entry;
    const path = this.pathOf(whole);
    const held = heldLock(this.locks, `${path}.lock`, options?.guard);
    await this.ensureDir(whole.account);
    await this.ensureFolder(dirname(path));
    const durable = whole.state === 'intent' || options.durable !== false;
    const line = `${JSON.stringify(whole)}\n`;
    if (held?.seen && this.wrote.get(held) === held.seen)
      await this.append(path, line, held, whole.orderNumber, durable);
    else await this.replace(path, line, held, whole.orderNumber, durable);
    // Its flat copy (an older version's) is out of date now: written under the order's lock.
    if (await this.flat(whole.account)) await rm(this.flatPathOf(whole), { force: true });
  }

  /** A new version of the entry, renamed over the one there: write's checks right before the rename. */
  private async replace(
    path: string,
    line: string,
    held: HeldLock | undefined,
    orderNumber: string,
    durable: boolean,
  ): Promise<void> {
    let written: string | null = null;
    const beforeRename = async (tmp: string): Promise<void> => {
      const now = identity(statSync(path, { bigint: true, throwIfNoEntry: false }));
      if (held) {
        this.assertStill(held, now, orderNumber);
        // The rename keeps the file's identity: the temporary's is the entry's once it lands.
        written = identity(statSync(tmp, { bigint: true }));
      }
      if (now !== null) this.keepReplaced(path);
    };
    await writeFileAtomic(path, line, { durable, beforeRename });
    if (held) {
      held.seen = written;
      if (written !== null) this.wrote.set(held, written);
    }
  }

  /**
   * The line appended to the entry this holder wrote, with write's checks on the file opened:
   * a crash cut it short leaves the entry as it was (parseEntry). Written with one system call
   * of this thread, as a small file's content is (writeSmall, atomic-write.ts); the fsync on the pool.
   */
  private async append(
    path: string,
    line: string,
    held: HeldLock,
    orderNumber: string,
    durable: boolean,
  ): Promise<void> {
    const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
    try {
      const before = fstatSync(fd, { bigint: true });
      this.assertStill(held, identity(before), orderNumber);
      try {
        writeWhole(fd, line);
        if (durable) await fsyncAsync(fd);
      } catch (err) {
        // A write that failed part way (a full disk) is taken back: the file is the entry it was.
        ftruncateSync(fd, Number(before.size));
        throw err;
      } finally {
        held.seen = identity(fstatSync(fd, { bigint: true }));
        if (held.seen !== null) this.wrote.set(held, held.seen);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** The lock still this holder's, and the entry (identity `now`) the file it last read or wrote. */
  private assertStill(held: HeldLock, now: string | null, orderNumber: string): void {
    if (held.seen !== undefined && now !== held.seen)
      throw new LockLostError(
        `lost the ledger lock of order ${JSON.stringify(orderNumber)} before its entry was written: another process wrote it since`,
      );
    held.guard.assertHeld();
  }

  /**
   * Gives the version at `path`, about to be replaced by a rename, a second name beside it
   * (keptName), so the rename does not free its inode; the day's upkeep removes it
   * (CompactPolicy.keptBefore). Why: on ext4 without a journal, creating a file checks, one by
   * one, the inodes of its group freed in the last minutes (the kernel's recently_deleted), so a
   * run that freed one with every rewrite (an order's content note, an entry written again) paid
   * more for each file it created as it went: `npm run bench -- --jobs 10000 --latency 5` shows it in
   * the run's system CPU. A file system that refuses hard links frees the version as before.
   */
  private keepReplaced(path: string): void {
    if (this.kept < 0) return;
    try {
      linkSync(path, keptName(path, this.kept++));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Gone meanwhile, or a name a dead process of the same PID left: this version is freed.
      if (code !== 'ENOENT' && code !== 'EEXIST') this.kept = -1;
    }
  }

  /**
   * Makes the account's folder; a new one gets the `.layout` of this version, so it is never
   * looked at for the flat layout.
   */
  private async ensureDir(account: string): Promise<void> {
    const dir = this.dirOf(account);
    if (!this.made.has(dir)) await this.once(`dir:${dir}`, () => this.makeDir(account, dir));
  }

  private async makeDir(account: string, dir: string): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: this.options.mode });
    try {
      await mkdir(dir, { mode: this.options.mode });
      await writeFileAtomic(join(dir, LAYOUT), layoutText(account), { durable: true });
      this.legacy.set(dir, { flat: false, at: Date.now() });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    this.made.add(dir);
    // Spare files (`.spare`: another name of an old entry's inode) that processes of earlier
    // htorder versions on this host left in `.locks` when killed.
    const locks = join(dir, '.locks');
    for (const name of await readdir(locks).catch(() => [])) {
      if (name.endsWith('.spare') && nameOwnerDead(name)) await rm(join(locks, name), { force: true });
    }
  }

  private async ensureFolder(dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await this.once(`dir:${dir}`, async () => {
      // A shard an earlier run made (the usual case past a ledger's first nights) needs no trip
      // through the pool to make it again; what is not a folder fails at the write that follows.
      if (!existsSync(dir)) await mkdir(dir, { recursive: true, mode: this.options.mode });
      this.made.add(dir);
    });
  }

  /** `look`'s promise, shared by every caller that asks for `name` while it runs. */
  private once<T>(name: string, look: () => Promise<T>): Promise<T> {
    const running = this.pending.get(name);
    if (running) return running as Promise<T>;
    const started = look().finally(() => this.pending.delete(name));
    this.pending.set(name, started);
    return started;
  }

  /**
   * Whether the account's folder may still hold entries of the flat layout: it exists without
   * a `.layout` (written when this version makes the folder, or once compact has moved every
   * flat entry). Looked at again a minute later while it does.
   */
  private async flat(account: string): Promise<boolean> {
    const dir = this.dirOf(account);
    const known = this.legacy.get(dir);
    if (known && (!known.flat || Date.now() - known.at < LEGACY_RECHECK_MS)) return known.flat;
    return this.once(`flat:${dir}`, () => this.lookFlat(dir));
  }

  private async lookFlat(dir: string): Promise<boolean> {
    const [folder, layout] = await Promise.all([
      stat(dir).catch(() => undefined),
      stat(join(dir, LAYOUT)).catch(() => undefined),
    ]);
    // No folder: nothing to read in any layout (and the next process to write makes it new).
    if (!folder) return false;
    const flat = layout === undefined;
    this.legacy.set(dir, { flat, at: Date.now() });
    return flat;
  }

  /** Folds old entries, removes expired notes and moves a flat layout into shards (folder-compact.ts). */
  async compact(account: string, policy: CompactPolicy): Promise<CompactResult> {
    await this.ensureDir(account);
    const dir = this.dirOf(account);
    const result = await compactAccount({ dir, account, locks: this.locks, mode: this.options.mode }, policy);
    if (result.layout) this.legacy.set(dir, { flat: false, at: Date.now() });
    return result;
  }

  /**
   * Forgets an account: its entries and its record. Only for `--sandbox-reset`, whose
   * simulator forgets the same jobs at the same time; never called for a real account.
   * Returns how many entries there were.
   */
  async removeAccount(account: string): Promise<number> {
    let n = 0;
    // An entry that cannot be read is forgotten with the rest.
    for await (const _ of this.entries(account, { unreadable: () => n++ })) n++;
    const dir = this.dirOf(account);
    await rm(dir, { recursive: true, force: true });
    for (const made of [...this.made]) if (made === dir || made.startsWith(`${dir}/`)) this.made.delete(made);
    this.legacy.delete(dir);
    return n;
  }

  async *entries(account?: string, options: LedgerEntries = {}): AsyncIterable<LedgerEntry> {
    const dirs = account
      ? [this.dirOf(account)]
      : (await unlessMissing(readdir(this.root, { withFileTypes: true }), []))
          .filter((d) => d.isDirectory() && !d.name.endsWith('.lock'))
          .map((d) => join(this.root, d.name));
    for (const dir of dirs) yield* accountEntries(dir, options);
  }
}

/**
 * Which file a name leads to, as far as a look can tell one file written over a name from the
 * next (each write is a new file, renamed there): null when there is none.
 */
function identity(s: BigIntStats | undefined): string | null {
  return s ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}` : null;
}

/** The parsed file and its identity, both of the one file opened (ON_THIS_THREAD); undefined when there is none. */
function readIdentified<T>(path: string): { value: T; identity: string | null } | undefined {
  // As folder-layout.ts's reads: a missing entry (a new order's) answers without a failed open.
  if (statSync(path, { throwIfNoEntry: false }) === undefined) return undefined;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw entryReadError(path, err);
  }
  try {
    const s = fstatSync(fd, { bigint: true });
    let text: string;
    try {
      text = readFileSync(fd, 'utf8');
    } catch (err) {
      throw entryReadError(path, err);
    }
    return { value: parsedEntry<T>(path, text), identity: identity(s) };
  } finally {
    closeSync(fd);
  }
}

/** An account folder's entries: each shard's live ones and folded ones, then any left in the flat layout. */
async function* accountEntries(dir: string, options: LedgerEntries): AsyncIterable<LedgerEntry> {
  const folded = options.folded !== false;
  const read = (path: string) => readListed(path, options);
  const shards = (await unlessMissing(readdir(join(dir, ORDERS)), [])).sort();
  // The account a folded order belongs to: compact writes it into `.layout` before it folds.
  const account = folded ? ((await readJson<{ account?: string }>(join(dir, LAYOUT)))?.account ?? '') : '';
  for (const shard of shards) {
    const path = join(dir, ORDERS, shard);
    const live = new Set<string>();
    for (const name of (await unlessMissing(readdir(path), [])).sort()) {
      if (!isEntryName(name)) continue;
      const entry = await read(join(path, name));
      if (!entry) continue;
      live.add(entry.orderNumber);
      yield entry;
    }
    if (!folded) continue;
    for (const f of foldedOrders(await readText(join(path, FOLDED)))) {
      if (!live.has(f.o)) yield entryOf(account, f);
    }
  }
  for (const name of (await unlessMissing(readdir(dir), [])).sort()) {
    if (!isEntryName(name)) continue;
    const entry = await read(join(dir, name));
    if (!entry) continue;
    // Moved into its shard meanwhile, or written there since: yielded above.
    const order = entry.orderNumber;
    if (typeof order === 'string' && (await stat(join(dir, ORDERS, orderShard(order), name)).catch(() => undefined)))
      continue;
    yield entry;
  }
}

/** An entry of a listing (entries): one that cannot be read is told to `options.unreadable` and skipped, else thrown. */
async function readListed(path: string, options: LedgerEntries): Promise<LedgerEntry | undefined> {
  try {
    return await readEntry<LedgerEntry>(path);
  } catch (err) {
    skipUnreadable(err, options);
    return undefined;
  }
}
