import type { BigIntStats } from 'node:fs';
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UsageError } from '../core/errors.js';
import { FolderLeases } from '../storage/folder-lease.js';
import { acquireLease, holdLease, type Lease, LeaseBusyError, newOwnerId } from '../storage/lease.js';
import { sandboxAccountKey } from '../storage/ledger/account-key.js';
import type { FolderLedger } from '../storage/ledger/folder-ledger.js';
import type { SandboxSnapshot, SandboxStateStore, StoredState } from '../sandbox/index.js';
import { writeFileAtomic } from '../storage/atomic-write.js';

/**
 * The state of the in-process sandbox of `--sandbox`, kept under the state dir so that a
 * second run finds the jobs of the first (and its ledger, under `sandbox/<account>`, agrees):
 * `<stateDir>/sandbox/state.json`. The simulator does no I/O itself (src/sandbox/persistence.ts
 * says when to read and write); this is its store: a bounded, hostile-input read, atomic
 * fsynced writes, and a lock between processes (`run --sandbox` beside `watch --sandbox`): the
 * folder lease `state.json.lock` (folder-lease.ts).
 */

/** The seed of the sandbox of `--sandbox`: fixed, so its saved state and its secrets fit every run. */
export const SANDBOX_SEED = 1;

/** A state this large is a runaway, not a demo (about 15,000 jobs of one line); a reset starts over. */
export const MAX_SANDBOX_STATE_BYTES = 32 * 1024 * 1024;

const RESET_HINT =
  "run again with --sandbox-reset to start over (it forgets the sandbox's jobs and the ledger entries of its accounts)";

/** O_NOFOLLOW: a link planted at the name is refused (ELOOP), not followed; O_NONBLOCK: a FIFO cannot block the open. */
const OPEN_STATE = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export function sandboxStateFile(stateDir: string): string {
  return join(stateDir, 'sandbox', 'state.json');
}

/** The error for a state that cannot be used: names the file and the way out. */
export function unusableState(file: string, why: string): UsageError {
  return new UsageError(`the sandbox state ${file} ${why}; ${RESET_HINT}`);
}

export interface SandboxStateFileOptions {
  /** A lock not renewed this long is a killed process's and is taken over (at least 2 s). */
  staleMs: number;
  /** How long to wait for another process's lock (held only while it saves). Default 30 s. */
  waitMs?: number;
}

export class SandboxStateFile implements SandboxStateStore {
  /** The file as last read or written by this process (inode, size, mtime), or `none`. */
  private seen: string | undefined;
  private readonly locks: FolderLeases;
  /** The lock while withLock holds it. */
  private lease: Lease | undefined;

  constructor(
    readonly file: string,
    private readonly options: SandboxStateFileOptions,
  ) {
    this.locks = new FolderLeases({ owner: newOwnerId(), leaseMs: Math.max(2000, options.staleMs) });
  }

  async readIfChanged(): Promise<StoredState> {
    const found = await this.read(this.seen);
    if (found.kind === 'same') return { kind: 'unchanged' };
    if (found.kind === 'none') {
      if (this.seen === 'none') return { kind: 'unchanged' };
      this.seen = 'none';
      return found;
    }
    if (found.signature === this.seen) return { kind: 'unchanged' };
    let state: unknown;
    try {
      state = JSON.parse(found.text);
    } catch (err) {
      throw unusableState(this.file, `is not valid JSON (${(err as Error).message})`);
    }
    this.seen = found.signature;
    return { kind: 'saved', state };
  }

  /**
   * The file's text, read with a bound; `none` when there is no file; `same` without reading
   * it when its signature is still `known` (a clock or a state checked often costs one stat).
   */
  read(): Promise<{ kind: 'none' } | { kind: 'text'; text: string; signature: string }>;
  read(
    known: string | undefined,
  ): Promise<{ kind: 'none' } | { kind: 'same' } | { kind: 'text'; text: string; signature: string }>;
  async read(
    known?: string,
  ): Promise<{ kind: 'none' } | { kind: 'same' } | { kind: 'text'; text: string; signature: string }> {
    let handle: FileHandle | undefined;
    try {
      handle = await open(this.file, OPEN_STATE);
      const st = await handle.stat({ bigint: true });
      if (!st.isFile()) throw unusableState(this.file, 'is not a regular file');
      if (known !== undefined && signature(st) === known) return { kind: 'same' };
      if (st.size > BigInt(MAX_SANDBOX_STATE_BYTES))
        throw unusableState(this.file, `is larger than ${MAX_SANDBOX_STATE_BYTES / 1024 / 1024} MiB`);
      // Read at most the bound, whatever the file grows to meanwhile.
      const buffer = Buffer.alloc(Number(st.size));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return { kind: 'text', text: buffer.subarray(0, bytesRead).toString('utf8'), signature: signature(st) };
    } catch (err) {
      if (err instanceof UsageError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && handle === undefined) return { kind: 'none' };
      const why = code === 'ELOOP' ? 'it is a symbolic link' : (code ?? (err as Error).message);
      throw unusableState(this.file, `cannot be read (${why})`);
    } finally {
      await handle?.close();
    }
  }

  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    const waitMs = this.options.waitMs ?? 30_000;
    const lockFile = `${this.file}.lock`;
    let lease: Lease;
    try {
      lease = await acquireLease(this.locks, lockFile, { waitMs, backoff: { baseMs: 10, maxMs: 200 } });
    } catch (err) {
      if (!(err instanceof LeaseBusyError)) throw err;
      throw new UsageError(
        `the sandbox state ${this.file} is locked by another htorder process (lock ${lockFile}, ` +
          `waited ${Math.round(waitMs / 1000)} s). A lock left by a killed process is taken over at once ` +
          `on this machine, and from another once not renewed for ${Math.round(this.locks.leaseMs / 1000)} s`,
      );
    }
    return holdLease(this.locks, lease, async () => {
      this.lease = lease;
      try {
        return await fn();
      } finally {
        this.lease = undefined;
      }
    });
  }

  async write(state: SandboxSnapshot): Promise<void> {
    const lost = this.lease?.lost();
    if (lost) throw new Error(`lost the lock of the sandbox state ${this.file}: ${lost.message}`);
    const text = `${JSON.stringify(state)}\n`;
    if (Buffer.byteLength(text) > MAX_SANDBOX_STATE_BYTES)
      throw unusableState(
        this.file,
        `would grow beyond ${MAX_SANDBOX_STATE_BYTES / 1024 / 1024} MiB (${state.created.length} jobs)`,
      );
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.file, text, { durable: true });
    // Under the lock nobody else writes: what is there now is what this process wrote.
    this.seen = signature(await stat(this.file, { bigint: true }));
  }
}

function signature(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}`;
}

/**
 * `--sandbox-reset`: under the state's lock, replaces the sandbox's state by a fresh one (the
 * job counter goes on, so no job number is ever handed out twice) and removes the ledger
 * entries of every sandbox account (`sandbox/<name>`), so the two agree again. The ledgers of
 * real accounts are never touched. Works on a state that cannot be read: that is what it is
 * for. Returns what it did, in one line for the user.
 */
export async function resetSandboxState(input: {
  store: SandboxStateFile;
  ledger: FolderLedger;
  seed: number;
}): Promise<string> {
  const { store, ledger } = input;
  const { resetSnapshot, sandboxAccountNames } = await import('../sandbox/index.js');
  return store.withLock(async () => {
    let previous: unknown;
    let had = false;
    try {
      const found = await store.read();
      had = found.kind === 'text';
      if (found.kind === 'text') previous = JSON.parse(found.text);
    } catch {
      // Unreadable or not JSON: forgotten all the same.
    }
    const { snapshot, forgotJobs } = resetSnapshot(previous, input.seed, Date.now());
    await store.write(snapshot);
    const removed: string[] = [];
    for (const name of sandboxAccountNames()) {
      const key = sandboxAccountKey(name);
      const n = await ledger.removeAccount(key);
      if (n > 0) removed.push(`${n} of ${key}`);
    }
    const state = !had
      ? `there was no sandbox state in ${store.file}`
      : `removed the sandbox state ${store.file} (${forgotJobs === undefined ? 'unreadable' : `${forgotJobs} job(s)`})`;
    const entries = removed.length === 0 ? 'no ledger entries of the sandbox' : `ledger entries: ${removed.join(', ')}`;
    return `--sandbox-reset: ${state}; ${entries}. Job numbers go on from ${snapshot.nextJobNumber}.`;
  });
}

/**
 * `htorder sandbox clock`: moves the clock of the sandbox state under `stateDir` forward by
 * `ms` (0: only reads it), through the sandbox's own admin route, under the state's lock, so
 * every `--sandbox` process on that state — a running `watch --sandbox` too — reads the new time
 * from its next request or input on. Returns the sandbox's time and how far ahead of real time it is.
 */
export async function moveSandboxClock(input: {
  stateDir: string;
  ms: number;
  staleMs: number;
}): Promise<{ now: string; offsetMs: number; file: string }> {
  const file = sandboxStateFile(input.stateDir);
  const { startSandbox, SandboxStateError } = await import('../sandbox/index.js');
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  try {
    sandbox = await startSandbox({
      port: 0,
      seed: SANDBOX_SEED,
      state: new SandboxStateFile(file, { staleMs: input.staleMs }),
    });
  } catch (err) {
    if (err instanceof SandboxStateError) throw unusableState(file, `is not a state htorder can use (${err.message})`);
    throw err;
  }
  try {
    const { now } = input.ms > 0 ? await sandbox.admin.advanceClock(input.ms) : await sandbox.admin.clock();
    return { now, offsetMs: sandbox.clockOffsetMs(), file };
  } finally {
    await sandbox.close();
  }
}
