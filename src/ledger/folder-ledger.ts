import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { writeFileAtomic } from '../storage/atomic-write.js';
import { safeName } from './safe-name.js';
import {
  type LedgerAccount,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type LockGuard,
  LockLostError,
  LockTimeoutError,
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
 * Locking uses proper-lockfile: an atomic `mkdir` of `<entry>.lock`, whose mtime the holder
 * refreshes; a lock left by a killed process goes stale after `staleMs` and is taken over.
 * mkdir is atomic on local disks and on NFS/SMB, which is where drop folders live.
 */
export class FolderLedger implements LedgerStore {
  private readonly root: string;
  private readonly staleMs: number;
  private readonly waitMs: number;
  /** Account folders known to exist: saves a mkdir per write on the hot path. */
  private readonly made = new Set<string>();

  /** Mode of the folders it creates: 0700 for the per-user default state dir. */
  private readonly mode: number | undefined;

  constructor(stateDir: string, options: FolderLedgerOptions = {}) {
    this.root = join(stateDir, 'ledger');
    this.staleMs = Math.max(2000, options.staleMs ?? 10_000);
    this.waitMs = options.waitMs ?? 120_000;
    this.mode = options.mode;
  }

  async readAccount(account: string): Promise<LedgerAccount | undefined> {
    try {
      return JSON.parse(await readFile(join(this.dirOf(account), '.account'), 'utf8')) as LedgerAccount;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
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
    let lost: Error | undefined;
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(path, {
        realpath: false,
        stale: this.staleMs,
        // Poll with backoff until the holder finishes or its lock goes stale.
        retries: {
          retries: Math.ceil(this.waitMs / 500),
          factor: 1.2,
          minTimeout: 25,
          maxTimeout: 500,
          randomize: true,
        },
        onCompromised: (err) => {
          // Default behaviour throws from a timer and kills the process; we record it instead
          // and refuse to do anything irreversible (guard.assertHeld) from then on.
          lost = err;
        },
      });
    } catch (err) {
      throw new LockTimeoutError(
        `order ${JSON.stringify(key.orderNumber)} is locked by another htorder process (${(err as Error).message})`,
      );
    }
    const guard: LockGuard = {
      assertHeld() {
        if (lost)
          throw new LockLostError(`lost the ledger lock of order ${JSON.stringify(key.orderNumber)}: ${lost.message}`);
      },
    };
    try {
      return await fn(guard);
    } finally {
      if (!lost) await release().catch(() => undefined);
    }
  }

  async read(key: LedgerKey): Promise<LedgerEntry | undefined> {
    try {
      // Synchronous: an entry is one small local file, and most reads find none (a new order).
      // fs/promises' readFile takes four thread-pool round trips (open, stat, read, close) and
      // a rejected promise with a stack for each missing file: a third of `run`'s ledger CPU
      // for a thousand new orders (issue 16), against a few microseconds of blocking here.
      return JSON.parse(readFileSync(this.pathOf(key), 'utf8')) as LedgerEntry;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
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
