import { linkSync, lstatSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLeaseToken } from '../../../src/storage/folder-lease.js';
import { FolderLedger } from '../../../src/storage/ledger/folder-ledger.js';
import type { LedgerKey } from '../../../src/storage/ledger/model.js';
import { orderShard } from '../../../src/storage/ledger/folder-layout.js';
import { safeName } from '../../../src/storage/ledger/safe-name.js';
import { ledgerEntry as entry } from '../../support/ledger-entries.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * The folder ledger's files: a lock is a hard link to the process's token, not a new file or
 * folder, in the order's shard, linked to one token per process and account (`.locks`). Locks
 * still exclude, and are excluded by, locks without a record in the manner of older htorder
 * versions (proper-lockfile's: a folder `<entry>.json.lock`, stale once its mtime is older than
 * the stale time).
 */

const account = 'http://127.0.0.1/us/api#1001';
const key = (orderNumber: string): LedgerKey => ({ account, orderNumber });

async function setUp(options: { staleMs?: number; waitMs?: number } = {}) {
  const state = await tempDirPerTest('htorder-ledger-');
  const ledger = new FolderLedger(state, options);
  const dir = join(state, 'ledger', safeName(account));
  const shardOf = (k: LedgerKey) => join(dir, 'orders', orderShard(k.orderNumber));
  const entryPath = (k: LedgerKey) => join(shardOf(k), `${safeName(k.orderNumber)}.json`);
  // The shard folder exists once the ledger has touched the order (a lock planted before needs it).
  const shard = (k: LedgerKey) => {
    mkdirSync(shardOf(k), { recursive: true });
    return shardOf(k);
  };
  return { ledger, dir, shard, entryPath, lockPath: (k: LedgerKey) => `${entryPath(k)}.lock` };
}

describe('the ledger lock', () => {
  it('is a hard link to one token per process: no file or folder is created per order', async () => {
    const { ledger, dir, lockPath } = await setUp();
    const inos: number[] = [];
    await ledger.withLock(key('A'), async () => {
      await ledger.withLock(key('B'), async () => {
        for (const k of [key('A'), key('B')]) {
          const s = lstatSync(lockPath(k));
          expect(s.isFile()).toBe(true);
          inos.push(s.ino);
        }
      });
    });
    const tokens = readdirSync(join(dir, '.locks')).filter(isLeaseToken);
    expect(tokens).toHaveLength(1);
    expect(inos).toEqual([lstatSync(join(dir, '.locks', tokens[0] as string)).ino, inos[0]]);
    // Released: the names are gone, the token stays for the next lock.
    expect(() => lstatSync(lockPath(key('A')))).toThrow(/ENOENT/);
  });

  it('refuses to go on at once when its lock was taken over or removed', async () => {
    const { ledger, lockPath } = await setUp();
    await ledger.withLock(key('T'), async (guard) => {
      guard.assertHeld();
      // Another process decided the lock was stale and took it: its own token, another inode.
      rmSync(lockPath(key('T')));
      writeFileSync(lockPath(key('T')), '');
      expect(() => guard.assertHeld()).toThrow(/lost the ledger lock of order "T"/);
    });
    // Not ours any more: release left the other holder's lock alone.
    expect(lstatSync(lockPath(key('T'))).isFile()).toBe(true);

    await ledger.withLock(key('R'), async (guard) => {
      rmSync(lockPath(key('R')));
      expect(() => guard.assertHeld()).toThrow(/was removed/);
    });
  });

  it('waits for a live mkdir lock (older htorder) and takes over a stale one', async () => {
    const { ledger, shard, lockPath } = await setUp({ staleMs: 2000, waitMs: 300 });
    mkdirSync(lockPath(key('P')), { recursive: true });
    await expect(ledger.withLock(key('P'), async () => 1)).rejects.toThrow(/locked by another htorder process/);
    expect(lstatSync(lockPath(key('P'))).isDirectory()).toBe(true);
    // A folder lock left by a killed older process: stale once its mtime is older than staleMs.
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath(key('P')), old, old);
    const took = await ledger.withLock(key('P'), async (guard) => {
      guard.assertHeld();
      return 'taken over';
    });
    expect(took).toBe('taken over');
    expect(readdirSync(shard(key('P'))).filter((n) => /\.(lock|stale)$/.test(n))).toEqual([]);
  });

  it('is respected by an older htorder while held: its mkdir fails and the mtime stays fresh', async () => {
    const { ledger, lockPath } = await setUp({ staleMs: 2000 });
    await ledger.withLock(key('Q'), async () => {
      // Held past the stale time: renewing the token keeps the lock's mtime fresh, so an older
      // htorder (proper-lockfile: mkdir, then the mtime rule) sees it held, never stale.
      for (let i = 0; i < 5; i++) {
        expect(() => mkdirSync(lockPath(key('Q')))).toThrow(/EEXIST/);
        expect(Date.now() - lstatSync(lockPath(key('Q'))).mtimeMs).toBeLessThan(2000);
        await new Promise((r) => setTimeout(r, 600));
      }
    });
  });

  it('takes over a stale link lock and removes what dead processes left in .locks', async () => {
    const { ledger, dir, shard, lockPath } = await setUp({ staleMs: 2000 });
    mkdirSync(join(dir, '.locks'), { recursive: true });
    shard(key('S'));
    // A token of a dead process on another host, not refreshed for a minute, and one of its locks.
    const deadToken = join(dir, '.locks', 'elsewhere~4242~0000.token');
    writeFileSync(deadToken, '');
    linkSync(deadToken, lockPath(key('S')));
    const old = new Date(Date.now() - 60_000);
    utimesSync(deadToken, old, old);
    // A spare of a dead process of this host (pid 2^22 + 1 exceeds Linux's pid_max).
    const deadSpare = join(dir, '.locks', `${encodeURIComponent(hostname())}~4194305~0000~1.spare`);
    writeFileSync(deadSpare, '{}');
    const took = await ledger.withLock(key('S'), async (guard) => {
      guard.assertHeld();
      return 'taken over';
    });
    expect(took).toBe('taken over');
    expect(readdirSync(join(dir, '.locks')).filter((n) => n.startsWith('elsewhere') || n.includes('4194305'))).toEqual(
      [],
    );
  });
});

describe('ledger entry writes', () => {
  it('through the ledger: no temp files, and entries that read back whole after many rewrites', async () => {
    const { ledger, shard } = await setUp();
    for (let i = 0; i < 60; i++) {
      const k = key(`O${i % 3}`);
      await ledger.withLock(k, async (guard) => {
        // Alternate long and short contents.
        await ledger.write(entry(k, { attempts: i, error: i % 2 ? 'x'.repeat(500) : undefined }), {
          guard,
          durable: i % 4 === 0 ? true : i % 2 === 0,
        });
      });
    }
    for (let j = 0; j < 3; j++) expect(await ledger.read(key(`O${j}`))).toMatchObject({ attempts: 57 + j });
    for (let j = 0; j < 3; j++) expect(readdirSync(shard(key(`O${j}`))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
