import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { FolderLeases } from '../folder-lease.js';
import { nameOwnerDead, newOwnerId } from '../lease.js';
import { noteName, safeName } from './safe-name.js';
import {
  type LedgerAccount,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type LockGuard,
  type NoteUpdate,
  noteUnderLock,
  withOrderLock,
} from './model.js';

export interface FolderLedgerOptions {
  /** A lock not refreshed for this long belongs to a dead process and may be taken over. */
  staleMs?: number;
  /** How long to wait for another live holder before giving up. */
  waitMs?: number;
  /** Mode of the folders it creates (before the umask); default the umask's. */
  mode?: number;
}

/** Waiting for an order another process holds: its lock is held for one submission. */
const LOCK_BACKOFF = { baseMs: 25, maxMs: 500 };

/**
 * The ledger as one JSON file per (account, orderNumber) under `<stateDir>/ledger/`, locked by
 * the folder lease `<entry>.json.lock` (its token in the account's `.locks/`) and written by
 * writeFileAtomic (docs/architecture.md#exactly-once).
 */
export class FolderLedger implements LedgerStore {
  private readonly root: string;
  /** Account folders known to exist: saves a mkdir per write on the hot path. */
  private readonly made = new Set<string>();
  private readonly locks: FolderLeases;

  constructor(
    stateDir: string,
    private readonly options: FolderLedgerOptions = {},
  ) {
    this.root = join(stateDir, 'ledger');
    this.locks = new FolderLeases({
      owner: newOwnerId(),
      leaseMs: Math.max(2000, options.staleMs ?? 10_000),
      tokenDir: '.locks',
      mode: options.mode,
      survivesHolder: true,
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
    return readJson<T>(join(this.dirOf(account), noteName(name)));
  }

  async writeNote(account: string, name: string, value: unknown, options: { durable?: boolean } = {}): Promise<void> {
    await this.ensureDir(account);
    await writeFileAtomic(join(this.dirOf(account), noteName(name)), `${JSON.stringify(value, null, 2)}\n`, {
      durable: options.durable !== false,
    });
  }

  async deleteNote(account: string, name: string): Promise<void> {
    await rm(join(this.dirOf(account), noteName(name)), { force: true });
  }

  async listNotes(account: string, prefix: string): Promise<string[]> {
    const names = await unlessMissing(readdir(this.dirOf(account)), []);
    return names.filter((n) => n.startsWith(noteName(prefix)) && !n.endsWith('.tmp') && !n.endsWith('.lock')).sort();
  }

  updateNote<T>(
    account: string,
    name: string,
    change: (current: T | undefined) => Promise<T | undefined>,
    options?: NoteUpdate,
  ): Promise<void> {
    return noteUnderLock(this, account, name, change, options);
  }

  async withAccountLock<T>(account: string, name: string, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    await this.ensureDir(account);
    const wait = { waitMs: this.options.waitMs ?? 120_000, backoff: LOCK_BACKOFF };
    const lock = join(this.dirOf(account), `${noteName(name)}.lock`);
    return withOrderLock(this.locks, lock, { account, orderNumber: name }, wait, fn);
  }

  private dirOf(account: string): string {
    return join(this.root, safeName(account));
  }

  private pathOf(key: LedgerKey): string {
    return join(this.dirOf(key.account), `${safeName(key.orderNumber)}.json`);
  }

  async withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    await this.ensureDir(key.account);
    const wait = { waitMs: this.options.waitMs ?? 120_000, backoff: LOCK_BACKOFF };
    return withOrderLock(this.locks, `${this.pathOf(key)}.lock`, key, wait, fn);
  }

  async read(key: LedgerKey): Promise<LedgerEntry | undefined> {
    return readJson<LedgerEntry>(this.pathOf(key));
  }

  async write(entry: LedgerEntry, options: { durable?: boolean } = {}): Promise<void> {
    await this.ensureDir(entry.account);
    const durable = entry.state === 'intent' || options.durable !== false;
    await writeFileAtomic(this.pathOf(entry), `${JSON.stringify(entry, null, 2)}\n`, { durable });
  }

  private async ensureDir(account: string): Promise<void> {
    const dir = this.dirOf(account);
    if (this.made.has(dir)) return;
    await mkdir(dir, { recursive: true, mode: this.options.mode });
    this.made.add(dir);
    // Spare files (`.spare`: another name of an old entry's inode) that processes of earlier
    // htorder versions on this host left in `.locks` when killed.
    const locks = join(dir, '.locks');
    for (const name of await readdir(locks).catch(() => [])) {
      if (name.endsWith('.spare') && nameOwnerDead(name)) await rm(join(locks, name), { force: true });
    }
  }

  /**
   * Forgets an account: its entries and its record. Only for `--sandbox-reset`, whose
   * simulator forgets the same jobs at the same time; never called for a real account.
   * Returns how many entries there were.
   */
  async removeAccount(account: string): Promise<number> {
    const dir = this.dirOf(account);
    const names = await unlessMissing(readdir(dir), []);
    await rm(dir, { recursive: true, force: true });
    this.made.delete(dir);
    return names.filter(isEntryName).length;
  }

  async *entries(account?: string): AsyncIterable<LedgerEntry> {
    const dirs = account
      ? [this.dirOf(account)]
      : (await unlessMissing(readdir(this.root, { withFileTypes: true }), []))
          .filter((d) => d.isDirectory() && !d.name.endsWith('.lock'))
          .map((d) => join(this.root, d.name));
    for (const dir of dirs) {
      for (const name of (await unlessMissing(readdir(dir), [])).sort()) {
        if (isEntryName(name)) yield JSON.parse(await readFile(join(dir, name), 'utf8')) as LedgerEntry;
      }
    }
  }
}

function isEntryName(name: string): boolean {
  return name.endsWith('.json') && !name.startsWith('.');
}

/** What `act` gives, or `none` when the file or folder is not there. */
async function unlessMissing<T>(act: Promise<T>, none: T): Promise<T> {
  try {
    return await act;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return none;
    throw err;
  }
}

/** The parsed file, or undefined when there is none. */
async function readJson<T>(path: string): Promise<T | undefined> {
  const text = await unlessMissing(readFile(path, 'utf8'), undefined);
  return text === undefined ? undefined : (JSON.parse(text) as T);
}
