import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { takeBackApproved } from '../../src/app/held-take-back.js';
import { offsetClock, systemClock } from '../../src/core/clock.js';
import { createLogger } from '../../src/core/log/logger.js';
import { approveInput } from '../../src/pipeline/approve.js';
import { approvedName, heldName, type HeldNote } from '../../src/pipeline/guard-notes.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import type { LedgerStore } from '../../src/storage/ledger/model.js';
import { FolderSource } from '../../src/watch/sources/folder-source.js';
import { sink } from '../support/sink.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { waitFor } from '../support/watch-harness.js';

const ACCOUNT = 'test-account';
const DAY_MS = 86_400_000;
/** The debug line a pruning of old approval notes ends with, whatever it removed. */
const PRUNED = 'looked for old approval notes';

/** Every call of the ledger's and the source's methods, counted by name (the real ones run). */
function counted<T extends object>(target: T, calls: Map<string, number>): T {
  return new Proxy(target, {
    get(t, name, receiver) {
      const value = Reflect.get(t, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(name), (calls.get(String(name)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

/** A drop folder with `n` inputs in held/, each with its held note in the ledger, as a watcher leaves them. */
async function heldInputs(n: number, heldAt = new Date().toISOString()) {
  const drop = await tempDirPerTest('htorder-take-back-drop-');
  const state = await tempDirPerTest('htorder-take-back-state-');
  const source = new FolderSource(drop, { workDir: join(state, 'work') });
  await source.init();
  const ledger = new FolderLedger(state);
  const shas: string[] = [];
  for (let i = 1; i <= n; i++) {
    const bytes = `version: 1\n# input ${i}\njobs: []\n`;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    shas.push(sha256);
    await writeFile(join(drop, 'held', `in-${i}.yaml`), bytes);
    const note: HeldNote = {
      noteVersion: 2,
      input: { file: join(drop, 'processing', `in-${i}.yaml`), sha256, held: join(drop, 'held', `in-${i}.yaml`) },
      heldAt,
      jobs: [{ orderNumber: `ORDER-${i}`, fingerprint: `fp-${i}`, reasons: ['over maxJobCost'] }],
    };
    await ledger.writeNote(ACCOUNT, heldName(sha256), note);
  }
  return { drop, state, source, ledger, shas };
}

function takeBack(
  source: FolderSource,
  ledger: LedgerStore,
  opts: { clock?: typeof systemClock; pruneEveryMs?: number; log?: ReturnType<typeof sink> } = {},
) {
  const owner = { ledger, account: ACCOUNT };
  const logger = createLogger({ level: 'debug', destination: (opts.log ?? sink()).stream });
  return takeBackApproved({
    source,
    ownerOf: async () => owner,
    own: async () => owner,
    logger,
    clock: opts.clock ?? systemClock,
    pruneEveryMs: opts.pruneEveryMs ?? 3_600_000,
  });
}

describe('taking approved inputs back from held/', () => {
  it('reads no held input and no note but the approvals mark while nothing changes', async () => {
    const { source, ledger, shas, drop } = await heldInputs(20);
    const ledgerCalls = new Map<string, number>();
    const sourceCalls = new Map<string, number>();
    const log = sink();
    const scan = takeBack(counted(source, sourceCalls), counted(ledger, ledgerCalls), { log });
    await scan();
    // The first look hashes each held input once and reads its notes.
    expect(sourceCalls.get('heldHash')).toBe(20);
    // The first scan also looks for old notes, off the scan: once that is done.
    await waitFor(() => (log.text().includes(PRUNED) ? true : undefined), 'the first pruning');
    expect(ledgerCalls.get('listNotes')).toBe(2);
    ledgerCalls.clear();
    sourceCalls.clear();
    for (let i = 0; i < 10; i++) await scan();
    expect(sourceCalls.get('heldHash') ?? 0).toBe(0);
    expect(ledgerCalls.get('listNotes') ?? 0).toBe(0);
    // One small read per scan: the account's approvals mark.
    expect(ledgerCalls.get('readNote')).toBe(10);

    await approveInput(ledger, ACCOUNT, { sha256: shas[6]!, by: 'sam' }, new Date());
    ledgerCalls.clear();
    await scan();
    expect(existsSync(join(drop, 'in-7.yaml'))).toBe(true);
    expect(existsSync(join(drop, 'held', 'in-7.yaml'))).toBe(false);
    // Each held input's notes read once (held, approved), none of the files hashed again.
    expect(ledgerCalls.get('readNote')).toBeLessThanOrEqual(1 + 2 * 20);
    expect(sourceCalls.get('heldHash') ?? 0).toBe(0);
    await source.close();
  });

  it('two watchers on one folder take each approved input back once, as one file with one link', async () => {
    const { source, ledger, shas, drop, state } = await heldInputs(24);
    // The second instance: its own source (work folder) and ledger handle on the same folders.
    const other = new FolderSource(drop, { workDir: join(state, 'work-2') });
    await other.init();
    const scans = [takeBack(source, ledger), takeBack(other, new FolderLedger(state))];
    await Promise.all(scans.map((scan) => scan()));
    for (const sha256 of shas) await approveInput(ledger, ACCOUNT, { sha256, by: 'sam' }, new Date());
    await Promise.all(scans.map((scan) => scan()));
    const top = (await readdir(drop, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
    expect(top.sort()).toEqual(shas.map((_, i) => `in-${i + 1}.yaml`).sort());
    for (const name of top) expect((await lstat(join(drop, name))).nlink, name).toBe(1);
    expect(await readdir(join(drop, 'held'))).toEqual([]);
    await Promise.all([source.close(), other.close()]);
  });

  it('opens a few notes and files at a time, however many inputs are held', async () => {
    const { source, ledger } = await heldInputs(60);
    let open = 0;
    let most = 0;
    const track =
      <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
      async (...a: A) => {
        open++;
        most = Math.max(most, open);
        try {
          return await f(...a);
        } finally {
          open--;
        }
      };
    const watched = Object.assign(Object.create(ledger) as FolderLedger, {
      readNote: track(ledger.readNote.bind(ledger)),
    });
    const held = Object.assign(Object.create(source) as FolderSource, {
      heldHash: track(source.heldHash.bind(source)),
    });
    await takeBack(held, watched)();
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(8);
    await source.close();
  });

  it('removes approval notes untouched for 30 days on its clock, except those of inputs still in held/', async () => {
    const old = new Date(Date.now() - 40 * DAY_MS).toISOString();
    const { source, ledger, shas } = await heldInputs(2, old);
    // An input no longer in held/ (run by hand, removed while no watcher ran): its notes are old.
    const gone = 'f'.repeat(64);
    await ledger.writeNote(ACCOUNT, heldName(gone), {
      noteVersion: 2,
      input: { file: '/nowhere/gone.yaml', sha256: gone },
      heldAt: old,
      jobs: [{ orderNumber: 'GONE-1', fingerprint: 'fp', reasons: [] }],
    } satisfies HeldNote);
    await ledger.writeNote(ACCOUNT, approvedName(gone), {
      noteVersion: 2,
      sha256: gone,
      approvals: [{ orderNumber: 'GONE-1', fingerprint: 'fp', by: 'sam', at: old }],
    });
    // Today nothing is 30 days old yet: the clock is moved back.
    const log = sink();
    await takeBack(source, ledger, { clock: offsetClock(-20 * DAY_MS), pruneEveryMs: 0, log })();
    // Pruning runs off the scan: its end is waited for, so what it left is what it decided.
    await waitFor(() => (log.text().includes(PRUNED) ? true : undefined), 'the pruning 20 days ago');
    expect(log.text()).not.toContain('removed old approval notes');
    expect(await ledger.listNotes(ACCOUNT, '.held-')).toHaveLength(3);
    await takeBack(source, ledger, { clock: systemClock, pruneEveryMs: 0, log })();
    // It says what it removed once it removed both notes of each input.
    await waitFor(() => (log.text().includes('removed old approval notes') ? true : undefined), 'pruning');
    expect((await ledger.listNotes(ACCOUNT, '.held-')).sort()).toEqual(shas.map(heldName).sort());
    expect(await ledger.listNotes(ACCOUNT, '.approved-')).toEqual([]);
    expect(log.text()).toContain('removed old approval notes');
    await source.close();
  });
});
