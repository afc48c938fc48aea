import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { temporaryName } from '../../../src/storage/atomic-write.js';
import { FolderLedger } from '../../../src/storage/ledger/folder-ledger.js';
import { isKeptName, orderShard } from '../../../src/storage/ledger/folder-layout.js';
import type { CompactPolicy, LedgerEntry, LedgerKey } from '../../../src/storage/ledger/model.js';
import { safeName, shardOf } from '../../../src/storage/ledger/safe-name.js';
import { ledgerEntry } from '../../support/ledger-entries.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * The folder ledger lasts: entries in shards, old orders folded into each shard's compact
 * index, expired notes removed, and an account folder of the flat layout (htorder before the
 * shards) read as it is and moved into shards.
 */

const account = 'https://api.us.example.com#1001';
const key = (orderNumber: string): LedgerKey => ({ account, orderNumber });
const DAY = 86_400_000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const submitted = (orderNumber: string, at: number, patch: Partial<LedgerEntry> = {}): LedgerEntry =>
  ledgerEntry(key(orderNumber), {
    state: 'submitted',
    payloadHash: `hash-${orderNumber}`,
    jobNumber: 500_000 + Number(orderNumber.replace(/\D/g, '') || 0),
    intentAt: iso(at),
    outcomeAt: iso(at + 1000),
    lines: [{ customerReference: 'ref', quantity: 5, newAssetSku: null, needsArtworkToBeUploaded: false }],
    input: { file: 'orders.yaml', sha256: 'a'.repeat(64) },
    ...patch,
  });

/** Sets a file's mtime to a calendar time (what a compaction's first look goes by). */
function age(path: string, at: number): void {
  utimesSync(path, new Date(at), new Date(at));
}

const NO_NOTES: CompactPolicy['notes'] = [];

async function setUp() {
  const state = await tempDirPerTest('htorder-ledger-');
  const dir = join(state, 'ledger', safeName(account));
  const entryPath = (orderNumber: string) =>
    join(dir, 'orders', orderShard(orderNumber), `${safeName(orderNumber)}.json`);
  return { state, dir, entryPath, ledger: new FolderLedger(state) };
}

/** Every folder under `root` with how many names it holds. */
function folderSizes(root: string): number[] {
  const out: number[] = [];
  const walk = (dir: string) => {
    const names = readdirSync(dir, { withFileTypes: true });
    out.push(names.length);
    for (const d of names) if (d.isDirectory()) walk(join(dir, d.name));
  };
  walk(root);
  return out;
}

describe('the folder ledger in shards', () => {
  it('keeps the account folder to a few fixed names, however many orders it records', async () => {
    const { dir, ledger } = await setUp();
    for (let i = 0; i < 1500; i += 100)
      await Promise.all(
        Array.from({ length: 100 }, (_, k) =>
          ledger.write(submitted(`PO-${i + k}`, T0), { guard: null, durable: false }).then(() => undefined),
        ),
      );
    for (let i = 0; i < 300; i++) await ledger.writeNote(account, `.content-${i.toString(16).padStart(32, '0')}`, {});
    expect(readdirSync(dir).sort()).toEqual(['.layout', 'notes', 'orders']);
    // 1,500 entries over 4,096 shards, 300 notes over 256: no folder holds more than a handful.
    expect(Math.max(...folderSizes(join(dir, 'orders')).slice(1))).toBeLessThan(10);
    expect(Math.max(...folderSizes(join(dir, 'notes')).slice(1))).toBeLessThan(10);
    expect(await ledger.read(key('PO-1499'))).toMatchObject({ state: 'submitted', jobNumber: 501_499 });
    expect(await ledger.listNotes(account, '.content-')).toHaveLength(300);
    expect(JSON.parse(readFileSync(join(dir, '.layout'), 'utf8'))).toEqual({ layout: 2, account });
  });
});

describe('compaction', () => {
  const policy = (now: number, retention: number, notes = NO_NOTES): CompactPolicy => ({
    foldBefore: now - retention,
    notes,
  });

  it('folds decided entries older than the retention into the compact index; a re-read gives what a later run needs', async () => {
    const { dir, entryPath, ledger } = await setUp();
    const now = T0 + 200 * DAY;
    await ledger.write(submitted('OLD-1', T0, { patchable: { description: 'first' }, cancelledAt: iso(T0 + DAY) }), {
      guard: null,
    });
    await ledger.write(
      ledgerEntry(key('OLD-FAILED'), { state: 'failed', intentAt: iso(T0), outcomeAt: iso(T0), error: 'x' }),
      { guard: null },
    );
    await ledger.write(ledgerEntry(key('OLD-INTENT'), { intentAt: iso(T0) }), { guard: null });
    await ledger.write(submitted('NEW-1', now - DAY), { guard: null });
    for (const o of ['OLD-1', 'OLD-FAILED', 'OLD-INTENT']) age(entryPath(o), T0 + DAY);

    const result = await ledger.compact(account, policy(now, 90 * DAY));
    expect(result).toMatchObject({ folded: 2, moved: 0 });
    expect(existsSync(entryPath('OLD-1'))).toBe(false);
    expect(existsSync(entryPath('OLD-FAILED'))).toBe(false);
    // An intent is never folded: it is settled by search first.
    expect(existsSync(entryPath('OLD-INTENT'))).toBe(true);
    expect(existsSync(entryPath('NEW-1'))).toBe(true);

    const old = await ledger.read(key('OLD-1'));
    expect(old).toEqual({
      ledgerVersion: 1,
      account,
      orderNumber: 'OLD-1',
      payloadHash: 'hash-OLD-1',
      state: 'submitted',
      attempts: 1,
      jobNumber: 500_001,
      intentAt: iso(T0 + 1000),
      outcomeAt: iso(T0 + 1000),
      patchable: { description: 'first' },
      cancelledAt: iso(T0 + DAY),
      folded: true,
    });
    expect(await ledger.read(key('OLD-FAILED'))).toMatchObject({ state: 'failed', folded: true });
    expect(await ledger.read(key('NEVER'))).toBeUndefined();
    // The index is one line per order, in the order's shard.
    const index = join(dir, 'orders', orderShard('OLD-1'), '.folded');
    expect(readFileSync(index, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('folds an entry whose outcome was appended to its intent, and a reader finds the outcome', async () => {
    const { entryPath, ledger } = await setUp();
    await ledger.withLock(key('APP-1'), async (guard) => {
      await ledger.write(ledgerEntry(key('APP-1'), { intentAt: iso(T0) }), { guard });
      await ledger.write(submitted('APP-1', T0), { guard, durable: false });
    });
    expect(readFileSync(entryPath('APP-1'), 'utf8').trim().split('\n')).toHaveLength(2);
    age(entryPath('APP-1'), T0 + DAY);
    expect(await ledger.compact(account, policy(T0 + 200 * DAY, 90 * DAY))).toMatchObject({ folded: 1 });
    expect(existsSync(entryPath('APP-1'))).toBe(false);
    expect(await ledger.read(key('APP-1'))).toMatchObject({ state: 'submitted', jobNumber: 500_001, folded: true });
  });

  it('keeps what every later compaction folded, merged; a rewritten order is whole again and folded anew', async () => {
    const { entryPath, ledger } = await setUp();
    // Orders that share a shard, so one index takes both.
    const shard = orderShard('S-0');
    const same = Array.from({ length: 20_000 }, (_, i) => `S-${i}`).filter((o) => orderShard(o) === shard);
    const [a, b] = same as [string, string];
    await ledger.write(submitted(a, T0), { guard: null });
    age(entryPath(a), T0);
    expect((await ledger.compact(account, policy(T0 + 100 * DAY, 90 * DAY))).folded).toBe(1);
    await ledger.write(submitted(b, T0 + 10 * DAY), { guard: null });
    age(entryPath(b), T0 + 10 * DAY);
    expect((await ledger.compact(account, policy(T0 + 110 * DAY, 90 * DAY))).folded).toBe(1);
    expect(await ledger.read(key(a))).toMatchObject({ jobNumber: expect.any(Number), folded: true });
    expect(await ledger.read(key(b))).toMatchObject({ folded: true });

    // A later run changes the old order (a PATCH): its entry is written whole, and wins.
    const folded = (await ledger.read(key(a)))!;
    await ledger.write({ ...folded, patchable: { description: 'changed' } }, { guard: null });
    const live = JSON.parse(readFileSync(entryPath(a), 'utf8')) as LedgerEntry;
    expect(live.folded).toBeUndefined();
    expect(await ledger.read(key(a))).toMatchObject({ patchable: { description: 'changed' } });
    expect((await ledger.read(key(a)))?.folded).toBeUndefined();
    age(entryPath(a), T0);
    expect((await ledger.compact(account, policy(T0 + 200 * DAY, 90 * DAY))).folded).toBe(1);
    expect(await ledger.read(key(a))).toMatchObject({ patchable: { description: 'changed' }, folded: true });

    const all: LedgerEntry[] = [];
    for await (const e of ledger.entries(account)) all.push(e);
    expect(all.map((e) => e.orderNumber).sort()).toEqual([a, b].sort());
    expect(all.every((e) => e.account === account)).toBe(true);
    const live2: LedgerEntry[] = [];
    for await (const e of ledger.entries(account, { folded: false })) live2.push(e);
    expect(live2).toEqual([]);
  });

  it('leaves an entry that cannot be read where it is, never removed, and folds the others', async () => {
    const { entryPath, ledger } = await setUp();
    const now = T0 + 200 * DAY;
    for (const o of ['OLD-1', 'OLD-2', 'OLD-3']) await ledger.write(submitted(o, T0), { guard: null });
    writeFileSync(entryPath('OLD-2'), Buffer.alloc(16));
    for (const o of ['OLD-1', 'OLD-2', 'OLD-3']) age(entryPath(o), T0 + DAY);
    expect(await ledger.compact(account, policy(now, 90 * DAY))).toMatchObject({ folded: 2 });
    expect(readFileSync(entryPath('OLD-2'))).toEqual(Buffer.alloc(16));
    await expect(ledger.read(key('OLD-2'))).rejects.toMatchObject({ name: 'LedgerEntryUnreadableError' });
  });

  it('leaves an entry whose lock is held, or that was rewritten, for a later compaction', async () => {
    const { state, entryPath, ledger } = await setUp();
    await ledger.write(submitted('HELD-1', T0), { guard: null });
    age(entryPath('HELD-1'), T0);
    const other = new FolderLedger(state);
    const result = await other.withLock(key('HELD-1'), () => ledger.compact(account, policy(T0 + 100 * DAY, DAY)));
    expect(result.folded).toBe(0);
    expect(existsSync(entryPath('HELD-1'))).toBe(true);
    expect(await ledger.read(key('HELD-1'))).toMatchObject({ lines: expect.any(Array) });
    expect((await ledger.compact(account, policy(T0 + 100 * DAY, DAY))).folded).toBe(1);
  });

  it('never lets a reader miss an order while it is folded', async () => {
    const { state, entryPath, ledger } = await setUp();
    const orders = Array.from({ length: 150 }, (_, i) => `R-${i}`);
    for (const o of orders) {
      await ledger.write(submitted(o, T0), { guard: null, durable: false });
      age(entryPath(o), T0);
    }
    const reader = new FolderLedger(state);
    let folding = true;
    const misses: string[] = [];
    const reading = (async () => {
      while (folding) for (const o of orders) if ((await reader.read(key(o)))?.jobNumber === undefined) misses.push(o);
    })();
    const result = await ledger.compact(account, policy(T0 + 100 * DAY, DAY));
    folding = false;
    await reading;
    expect(result.folded).toBe(150);
    expect(misses).toEqual([]);
  });

  it('removes the notes its rules say have expired, judged by what they hold', async () => {
    const { dir, ledger } = await setUp();
    const now = T0 + 10 * DAY;
    const content = (n: number) => `.content-${n.toString(16).padStart(32, '0')}`;
    await ledger.writeNote(account, content(1), { at: iso(T0) });
    await ledger.writeNote(account, content(2), { at: iso(now - 3600_000) });
    await ledger.writeNote(account, content(3), 'damaged');
    await ledger.writeNote(account, '.spent-2026-01-01', {});
    await ledger.writeNote(account, '.spent-2026-01-10', {});
    for (const name of await ledger.listNotes(account, '.content-'))
      age(join(dir, 'notes', shardOf(name, 2), name), T0);
    const at = (v: unknown) => (typeof v === 'object' && v ? Date.parse((v as { at: string }).at) : undefined);
    const result = await ledger.compact(account, {
      notes: [
        { prefix: '.content-', before: now - DAY, at },
        { prefix: '.spent-', before: now - 2 * DAY, at: () => undefined },
      ],
    });
    // The spend notes were written just now (their mtime): not even read.
    expect(result).toMatchObject({ notes: 2, folded: 0 });
    expect(await ledger.listNotes(account, '.content-')).toEqual([content(2)]);
    expect(await ledger.listNotes(account, '.spent-')).toHaveLength(2);
  });
});

describe('an account folder of the flat layout (htorder before the shards)', () => {
  /** A state dir written by `htorder run --sandbox` of flat-layout/orders.yaml before the shards. */
  const FIXTURE = fileURLToPath(new URL('flat-layout/state', import.meta.url));
  const SANDBOX = 'sandbox/us-demo';
  const flatKey = (orderNumber: string): LedgerKey => ({ account: SANDBOX, orderNumber });

  async function flatState() {
    const state = await tempDirPerTest('htorder-flat-');
    cpSync(FIXTURE, state, { recursive: true });
    const dir = join(state, 'ledger', safeName(SANDBOX));
    return { state, dir, ledger: new FolderLedger(state) };
  }

  it('is read as it is: entries, the account record, notes', async () => {
    const { ledger } = await flatState();
    expect(await ledger.read(flatKey('FLAT-0001'))).toMatchObject({ state: 'submitted', jobNumber: 700001 });
    expect(await ledger.read(flatKey('FLAT/0002 odd name'))).toMatchObject({ jobNumber: 700002 });
    expect(await ledger.read(flatKey('FLAT-0004'))).toBeUndefined();
    expect(await ledger.readAccount(SANDBOX)).toMatchObject({ vouchedSince: expect.any(String) });
    const notes = await ledger.listNotes(SANDBOX, '.content-');
    expect(notes).toHaveLength(3);
    expect(await ledger.readNote(SANDBOX, notes[0]!)).toMatchObject({ noteVersion: 2 });
    const all: string[] = [];
    for await (const e of ledger.entries(SANDBOX)) all.push(e.orderNumber);
    expect(all.sort()).toEqual(['FLAT-0001', 'FLAT-0003', 'FLAT/0002 odd name']);
  });

  it('is written in shards: an order rewritten leaves no flat copy behind', async () => {
    const { dir, ledger } = await flatState();
    const flat = join(dir, `${safeName('FLAT-0003')}.json`);
    const entry = (await ledger.read(flatKey('FLAT-0003')))!;
    await ledger.withLock(flatKey('FLAT-0003'), (guard) =>
      ledger.write({ ...entry, patchable: { description: 'new' } }, { guard }),
    );
    expect(existsSync(flat)).toBe(false);
    expect(await ledger.read(flatKey('FLAT-0003'))).toMatchObject({ patchable: { description: 'new' } });
    await ledger.write(submitted('NEW-9', T0, { account: SANDBOX }), { guard: null });
    expect(existsSync(join(dir, 'orders', orderShard('NEW-9'), `${safeName('NEW-9')}.json`))).toBe(true);
  });

  it('keeps the flat layout while a flat entry cannot be read: its order never reads as unseen', async () => {
    const { dir, ledger } = await flatState();
    const flat = join(dir, `${safeName('FLAT-0003')}.json`);
    writeFileSync(flat, Buffer.alloc(8));
    expect(await ledger.compact(SANDBOX, { notes: [] })).toMatchObject({ moved: 5 });
    expect(existsSync(join(dir, '.layout'))).toBe(false);
    expect(readFileSync(flat)).toEqual(Buffer.alloc(8));
    for (const l of [ledger, new FolderLedger(join(dir, '..', '..'))])
      await expect(l.read(flatKey('FLAT-0003'))).rejects.toMatchObject({
        name: 'LedgerEntryUnreadableError',
        path: flat,
      });
  });

  it('is moved into shards by a compaction, after which nothing is flat and everything reads the same', async () => {
    const { state, dir, ledger } = await flatState();
    const before: LedgerEntry[] = [];
    for await (const e of ledger.entries(SANDBOX)) before.push(e);
    const notes = await ledger.listNotes(SANDBOX, '.content-');
    const result = await ledger.compact(SANDBOX, { notes: [] });
    expect(result).toMatchObject({ moved: 6, folded: 0 });
    expect(readdirSync(dir).sort()).toEqual(['.account', '.layout', '.locks', 'notes', 'orders']);
    const after: LedgerEntry[] = [];
    for await (const e of ledger.entries(SANDBOX)) after.push(e);
    expect(after.sort((a, b) => (a.orderNumber < b.orderNumber ? -1 : 1))).toEqual(
      before.sort((a, b) => (a.orderNumber < b.orderNumber ? -1 : 1)),
    );
    expect(await ledger.listNotes(SANDBOX, '.content-')).toEqual(notes);
    // A ledger opened afresh finds it in this layout, and the fold works on it.
    const fresh = new FolderLedger(state);
    expect(await fresh.read(flatKey('FLAT-0001'))).toMatchObject({ jobNumber: 700001 });
    const far = Date.parse((await fresh.read(flatKey('FLAT-0001')))!.outcomeAt!) + 400 * DAY;
    expect((await fresh.compact(SANDBOX, { foldBefore: far - 90 * DAY, notes: [] })).folded).toBe(3);
    expect(await fresh.read(flatKey('FLAT-0001'))).toMatchObject({ jobNumber: 700001, folded: true });
    expect(statSync(join(dir, '.layout')).isFile()).toBe(true);
  });
});

describe('the temporaries a killed writer leaves', () => {
  /** The PID of a process that has exited. */
  const deadPid = (): number =>
    Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

  /** A temporary of an atomic write of `path` by `pid`, its mtime `ageMs` ago. */
  function plant(path: string, pid: number, ageMs: number): string {
    mkdirSync(join(path, '..'), { recursive: true });
    const tmp = temporaryName(path).replace(`.${process.pid}.`, `.${pid}.`);
    writeFileSync(tmp, '{"torn":');
    age(tmp, Date.now() - ageMs);
    return tmp;
  }

  it('removes those over an hour old whose writer is gone, in every folder, and keeps every other', async () => {
    const { dir, entryPath, ledger } = await setUp();
    await ledger.write(submitted('TMP-1', Date.now()), { guard: null });
    const dead = deadPid();
    const HOUR = 3_600_000;
    const stray = [
      plant(entryPath('TMP-1'), dead, 2 * HOUR),
      plant(entryPath('TMP-2'), dead, 2 * HOUR),
      plant(join(dir, '.account'), dead, 25 * HOUR),
      plant(join(dir, 'notes', 'ab', '.content-ab12'), dead, 2 * HOUR),
    ];
    const kept = [
      // Young: its writer may be another host's, still writing.
      plant(entryPath('TMP-3'), dead, 10 * 60_000),
      // A live writer of this host (this test's parent process).
      plant(entryPath('TMP-4'), process.ppid, 2 * HOUR),
      // This process's own.
      plant(join(dir, '.layout'), process.pid, 2 * HOUR),
    ];
    const foreign = join(dir, 'orders', orderShard('TMP-1'), 'notes.tmp');
    writeFileSync(foreign, 'a file that is not a temporary of ours');
    age(foreign, Date.now() - 2 * HOUR);

    const result = await ledger.compact(account, { notes: NO_NOTES });

    expect(result.temporaries).toBe(stray.length);
    for (const path of stray) expect(existsSync(path)).toBe(false);
    for (const path of [...kept, foreign]) expect(existsSync(path)).toBe(true);
    expect(await ledger.read(key('TMP-1'))).toMatchObject({ state: 'submitted' });
  });
});

describe('the versions a write replaces', () => {
  /** The names of replaced versions kept in `dir`. */
  const keptIn = (dir: string) => readdirSync(dir).filter(isKeptName);

  it('are kept beside the entry or note under a hidden name, never read as one, until a compaction removes those kept before its time', async () => {
    const { dir, entryPath, ledger } = await setUp();
    const intent = ledgerEntry(key('KEEP-1'), { intentAt: iso(T0) });
    await ledger.write(intent, { guard: null });
    const shard = join(entryPath('KEEP-1'), '..');
    // A first write replaces nothing.
    expect(keptIn(shard)).toEqual([]);
    await ledger.write(submitted('KEEP-1', T0), { guard: null, durable: false });
    await ledger.writeNote(account, '.upkeep', { n: 1 });
    await ledger.writeNote(account, '.upkeep', { n: 2 });

    const [old] = keptIn(shard);
    expect(keptIn(shard)).toHaveLength(1);
    expect(old.startsWith(`.${safeName('KEEP-1')}.json.${process.pid}.`)).toBe(true);
    expect(JSON.parse(readFileSync(join(shard, old), 'utf8'))).toEqual(intent);
    expect(keptIn(dir)).toHaveLength(1);
    expect(await ledger.read(key('KEEP-1'))).toMatchObject({ state: 'submitted' });
    expect(await ledger.readNote(account, '.upkeep')).toEqual({ n: 2 });
    const all: LedgerEntry[] = [];
    for await (const e of ledger.entries(account)) all.push(e);
    expect(all.map((e) => [e.orderNumber, e.state])).toEqual([['KEEP-1', 'submitted']]);

    // Kept since after the compaction's time: they stay; since before it: they go.
    expect(await ledger.compact(account, { keptBefore: Date.now() - 3_600_000, notes: NO_NOTES })).toMatchObject({
      kept: 0,
    });
    expect(keptIn(shard)).toHaveLength(1);
    expect(await ledger.compact(account, { keptBefore: Date.now() + 1000, notes: NO_NOTES })).toMatchObject({
      kept: 2,
    });
    expect([...keptIn(shard), ...keptIn(dir)]).toEqual([]);
    expect(await ledger.read(key('KEEP-1'))).toMatchObject({ state: 'submitted' });
    expect(await ledger.readNote(account, '.upkeep')).toEqual({ n: 2 });
  });

  it('change nothing anyone reads: any writes give the entries and notes a ledger that frees them gives', async () => {
    const step = fc.record({
      order: fc.constantFrom('A-1', 'A-2', 'B/3', 'ü 4'),
      state: fc.constantFrom('intent', 'submitted', 'failed'),
      note: fc.option(fc.constantFrom('.upkeep', `.content-${'0'.repeat(31)}1`, '.spent-2026-01-01'), {
        nil: undefined,
      }),
      n: fc.nat(1000),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const [keeping, freeing] = await Promise.all([
          tempDirPerTest('htorder-kept-'),
          tempDirPerTest('htorder-freed-'),
        ]).then(([a, b]) => [new FolderLedger(a), new FolderLedger(b, { keepReplaced: false })]);
        for (const l of [keeping, freeing])
          for (const s of steps) {
            const entry = ledgerEntry(key(s.order), {
              state: s.state as LedgerEntry['state'],
              intentAt: iso(T0 + s.n),
            });
            await l.write(entry, { guard: null, durable: s.state === 'intent' });
            if (s.note) await l.writeNote(account, s.note, { n: s.n });
          }
        const seen = async (l: FolderLedger) => {
          const entries: LedgerEntry[] = [];
          for await (const e of l.entries(account)) entries.push(e);
          entries.sort((a, b) => a.orderNumber.localeCompare(b.orderNumber));
          const notes = (
            await Promise.all(['.upkeep', '.content-', '.spent-'].map((p) => l.listNotes(account, p)))
          ).flat();
          return { entries, notes: await Promise.all(notes.map((n) => l.readNote(account, n))), names: notes };
        };
        expect(await seen(keeping)).toEqual(await seen(freeing));
      }),
      { numRuns: 15 },
    );
  });
});
