import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { FolderLeases } from '../folder-lease.js';
import { nameOwnerDead, newOwnerId } from '../lease.js';
import { removeFile } from '../remove-file.js';
import { safeName } from './safe-name.js';
import {
  type LedgerAccount,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type LockGuard,
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

/**
 * The ledger as one JSON file per (account, orderNumber) under `<stateDir>/ledger/`.
 *
 * Locking: `<entry>.json.lock` is a folder lease (folder-lease.ts) whose token is in the
 * account's `.locks/`, renewed while held; a lock left by a killed process is taken over once
 * its lease runs out, as the requests that process sent may still be on their way. Older
 * htorder versions' locks (the same path, judged by mtime) and these exclude each other.
 *
 * Writes: writeFileAtomic (temp file, fsync when durable, rename). See
 * docs/architecture.md#exactly-once.
 */
/** Waiting for an order another process holds: its lock is held for one submission. */
const LOCK_BACKOFF = { baseMs: 25, maxMs: 500 };

export class FolderLedger implements LedgerStore {
  private readonly root: string;
  private readonly waitMs: number;
  /** Account folders known to exist: saves a mkdir per write on the hot path. */
  private readonly made = new Set<string>();

  /** Mode of the folders it creates: 0700 for the per-user default state dir. */
  private readonly mode: number | undefined;
  private readonly locks: FolderLeases;

  constructor(stateDir: string, options: FolderLedgerOptions = {}) {
    this.root = join(stateDir, 'ledger');
    this.waitMs = options.waitMs ?? 120_000;
    this.mode = options.mode;
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

  private dirOf(account: string): string {
    return join(this.root, safeName(account));
  }

  private pathOf(key: LedgerKey): string {
    return join(this.dirOf(key.account), `${safeName(key.orderNumber)}.json`);
  }

  async withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    const path = this.pathOf(key);
    await this.ensureDir(key.account);
    return withOrderLock(this.locks, `${path}.lock`, key, { waitMs: this.waitMs, backoff: LOCK_BACKOFF }, fn);
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
    await mkdir(dir, { recursive: true, ...(this.mode === undefined ? {} : { mode: this.mode }) });
    this.made.add(dir);
    // Spare files (`.spare`: another name of an old entry's inode) that processes of earlier
    // htorder versions on this host left in `.locks` when killed.
    const locks = join(dir, '.locks');
    for (const name of await readdir(locks).catch(() => [])) {
      if (name.endsWith('.spare') && nameOwnerDead(name)) await removeFile(join(locks, name));
    }
  }

  /**
   * Forgets an account: its entries and its record. Only for `--sandbox-reset`, whose
   * simulator forgets the same jobs at the same time; never called for a real account.
   * Returns how many entries there were.
   */
  async removeAccount(account: string): Promise<number> {
    const dir = this.dirOf(account);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    await rm(dir, { recursive: true, force: true });
    this.made.delete(dir);
    return names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).length;
  }

  async *entries(account?: string): AsyncIterable<LedgerEntry> {
    const dirs = account ? [this.dirOf(account)] : await listDirs(this.root);
    for (const dir of dirs) {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      for (const name of names.sort()) {
        if (!name.endsWith('.json') || name.startsWith('.')) continue;
        yield JSON.parse(await readFile(join(dir, name), 'utf8')) as LedgerEntry;
      }
    }
  }
}

async function listDirs(root: string): Promise<string[]> {
  try {
    const items = await readdir(root, { withFileTypes: true });
    return items.filter((d) => d.isDirectory() && !d.name.endsWith('.lock')).map((d) => join(root, d.name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** The parsed file, or undefined when there is none. */
async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
