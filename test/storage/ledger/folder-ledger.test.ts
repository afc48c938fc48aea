import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { FolderLedger } from '../../../src/storage/ledger/folder-ledger.js';
import { LockLostError } from '../../../src/storage/ledger/model.js';
import { safeName } from '../../../src/storage/ledger/safe-name.js';
import { ledgerEntry as entry } from '../../support/ledger-entries.js';
import { DIST, requireDist } from '../../support/dist.js';

const account = 'http://127.0.0.1/us/api#1001';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'htorder-ledger-'));
}

describe('safeName', () => {
  it('keeps names inside the folder and distinct', () => {
    for (const evil of ['../etc/passwd', 'a/b', '..', '.hidden', 'PO 1/2', 'Ω']) {
      const name = safeName(evil);
      expect(name).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/);
      expect(name).not.toContain('/');
    }
    expect(safeName('a/b')).not.toBe(safeName('a_b'));
  });
});

describe('FolderLedger', () => {
  it('round-trips an entry and answers undefined for an unknown order', async () => {
    const ledger = new FolderLedger(await tempDir());
    const key = { account, orderNumber: 'PO-1' };
    expect(await ledger.read(key)).toBeUndefined();
    await ledger.write(entry(key, { state: 'submitted', jobNumber: 42 }), { guard: null });
    expect(await ledger.read(key)).toMatchObject({ state: 'submitted', jobNumber: 42 });
    expect(await ledger.read({ account: 'other#2', orderNumber: 'PO-1' })).toBeUndefined();
  });

  it("lands a new account's first orders written at once, and makes again a folder it could not make", async () => {
    const state = await tempDir();
    // A file where the ledger folder goes: no folder can be made until it is gone.
    await writeFile(join(state, 'ledger'), '');
    const ledger = new FolderLedger(state);
    const keys = Array.from({ length: 24 }, (_, i) => ({ account, orderNumber: `PO-${i}` }));
    const failed = await Promise.allSettled(
      keys.map((k) => ledger.write(entry(k, { state: 'intent' }), { guard: null })),
    );
    expect(failed.every((r) => r.status === 'rejected')).toBe(true);
    await rm(join(state, 'ledger'));
    await Promise.all(keys.map((k) => ledger.write(entry(k, { state: 'submitted', jobNumber: 7 }), { guard: null })));
    const read = await Promise.all(keys.map((k) => ledger.read(k)));
    expect(read.map((e) => e?.jobNumber)).toEqual(keys.map(() => 7));
    // Made new by this version: its layout is written, and another process reads it the same.
    expect(await readdir(join(state, 'ledger', safeName(account)))).toContain('.layout');
    expect((await new FolderLedger(state).read(keys[5]!))?.state).toBe('submitted');
  });

  it('lists entries per account', async () => {
    const ledger = new FolderLedger(await tempDir());
    await ledger.write(entry({ account, orderNumber: 'B' }), { guard: null });
    await ledger.write(entry({ account, orderNumber: 'A' }), { guard: null });
    await ledger.write(entry({ account: 'other#2', orderNumber: 'C' }), { guard: null });
    const mine: string[] = [];
    for await (const e of ledger.entries(account)) mine.push(e.orderNumber);
    expect(mine.sort()).toEqual(['A', 'B']);
    const all: string[] = [];
    for await (const e of ledger.entries()) all.push(e.orderNumber);
    expect(all.sort()).toEqual(['A', 'B', 'C']);
  });

  it('serialises concurrent holders in one process (no lost update)', async () => {
    const ledger = new FolderLedger(await tempDir());
    const key = { account, orderNumber: 'PO-race' };
    await Promise.all(
      Array.from({ length: 15 }, () =>
        ledger.withLock(key, async (guard) => {
          const current = (await ledger.read(key, { guard }))?.attempts ?? 0;
          await sleep(2);
          await ledger.write(entry(key, { attempts: current + 1 }), { guard });
        }),
      ),
    );
    expect((await ledger.read(key))?.attempts).toBe(15);
  });

  describe('across processes', () => {
    beforeAll(() => requireDist());

    const worker = (stateDir: string, orderNumber: string, rounds: number, holdMs = 0) => `
      import { FolderLedger } from ${JSON.stringify(join(DIST, 'storage/ledger/folder-ledger.js'))};
      const ledger = new FolderLedger(${JSON.stringify(stateDir)}, { staleMs: 2000 });
      const key = { account: ${JSON.stringify(account)}, orderNumber: ${JSON.stringify(orderNumber)} };
      for (let i = 0; i < ${rounds}; i++) {
        await ledger.withLock(key, async (guard) => {
          const cur = (await ledger.read(key, { guard }))?.attempts ?? 0;
          if (${holdMs} > 0) { process.stdout.write('holding\\n'); await new Promise(r => setTimeout(r, ${holdMs})); }
          await new Promise(r => setTimeout(r, 1));
          await ledger.write({ ledgerVersion: 1, account: key.account, orderNumber: key.orderNumber,
            payloadHash: 'h', state: 'intent', attempts: cur + 1, intentAt: new Date().toISOString() }, { guard });
        });
      }`;

    function run(code: string) {
      return spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
    }

    function exit(child: ReturnType<typeof run>): Promise<number | null> {
      return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    }

    it('four processes incrementing one order never lose an update', async () => {
      const dir = await tempDir();
      const children = Array.from({ length: 4 }, () => run(worker(dir, 'PO-multi', 10)));
      const codes = await Promise.all(children.map(exit));
      expect(codes).toEqual([0, 0, 0, 0]);
      const ledger = new FolderLedger(dir);
      expect((await ledger.read({ account, orderNumber: 'PO-multi' }))?.attempts).toBe(40);
    });

    it('takes over the lock of a holder killed with SIGKILL', async () => {
      const dir = await tempDir();
      const holder = run(worker(dir, 'PO-kill', 1, 60_000));
      await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
      holder.kill('SIGKILL');
      await exit(holder);
      const ledger = new FolderLedger(dir, { staleMs: 2000, waitMs: 20_000 });
      const key = { account, orderNumber: 'PO-kill' };
      const ran = await ledger.withLock(key, async (guard) => {
        guard.assertHeld();
        return 'acquired';
      });
      expect(ran).toBe('acquired');
      // The killed holder never wrote: no entry, and no stray temp files left by us.
      expect(await ledger.read(key)).toBeUndefined();
      const files = await readdir(join(dir, 'ledger', safeName(account)), { recursive: true });
      expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    }, 30_000);

    // A holder told to stop by SIGTERM: its own `process.once` listener stops it (exit 0: track
    // --watch, ui, sandbox); with no listener of its own, the signal kills it, locks removed.
    const stopper = (stateDir: string, orderNumber: string, listen: boolean) => `
      import { FolderLedger } from ${JSON.stringify(join(DIST, 'storage/ledger/folder-ledger.js'))};
      let stop;
      const stopped = new Promise((resolve) => { stop = resolve; });
      // Before the ledger's own listeners, as track --watch does.
      if (${listen}) process.once('SIGTERM', () => stop());
      const ledger = new FolderLedger(${JSON.stringify(stateDir)}, { staleMs: 2000 });
      const key = { account: ${JSON.stringify(account)}, orderNumber: ${JSON.stringify(orderNumber)} };
      const alive = setInterval(() => {}, 1000);
      await ledger.withLock(key, async () => {
        process.stdout.write('holding\\n');
        await stopped;
      });
      clearInterval(alive);`;

    it('a SIGTERM listened to with process.once stops the holder, not the lock clean-up (exit 0)', async () => {
      const dir = await tempDir();
      const holder = run(stopper(dir, 'PO-term', true));
      await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        holder.on('exit', (code, signal) => resolve({ code, signal })),
      );
      holder.kill('SIGTERM');
      expect(await exited).toEqual({ code: 0, signal: null });
      const files = await readdir(join(dir, 'ledger', safeName(account)), { recursive: true });
      expect(files.filter((f) => f.endsWith('.lock'))).toEqual([]);
    }, 30_000);

    it('a SIGTERM nobody listens to kills the holder, and its lock is removed', async () => {
      const dir = await tempDir();
      const holder = run(stopper(dir, 'PO-kill-term', false));
      await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        holder.on('exit', (_code, signal) => resolve(signal)),
      );
      holder.kill('SIGTERM');
      expect(await exited).toBe('SIGTERM');
      const files = await readdir(join(dir, 'ledger', safeName(account)), { recursive: true });
      expect(files.filter((f) => f.endsWith('.lock'))).toEqual([]);
    }, 30_000);

    it('gives up with a clear error while a live process holds the lock', async () => {
      const dir = await tempDir();
      const holder = run(worker(dir, 'PO-busy', 1, 10_000));
      await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
      const ledger = new FolderLedger(dir, { staleMs: 2000, waitMs: 600 });
      await expect(ledger.withLock({ account, orderNumber: 'PO-busy' }, async () => 1)).rejects.toThrow(
        /locked by another htorder process/,
      );
      holder.kill('SIGKILL');
      await exit(holder);
    }, 30_000);
  });
});

describe('FolderLedger: a write under a lock that another process has taken over since', () => {
  it('refuses the late entry of a holder whose lease ran out and was taken over; the order stays submitted', async () => {
    const dir = await tempDir();
    const a = new FolderLedger(dir, { staleMs: 2000 });
    // Another host whose clock is a minute on: to it, A's lease ran out long ago (A stalled past it).
    const b = new FolderLedger(dir, { staleMs: 2000, waitMs: 5000, now: () => Date.now() + 60_000 });
    const key = { account, orderNumber: 'PO-late' };
    const late = a.withLock(key, async (guard) => {
      expect(await a.read(key, { guard })).toBeUndefined();
      await a.write(entry(key, { state: 'intent' }), { guard });
      await b.withLock(key, async (taken) => {
        expect((await b.read(key, { guard: taken }))?.state).toBe('intent');
        await b.write(entry(key, { state: 'submitted', jobNumber: 9 }), { guard: taken });
      });
      // A wakes up and records what it last knew.
      await a.write(entry(key, { state: 'failed', error: 'refused' }), { guard });
    });
    await expect(late).rejects.toBeInstanceOf(LockLostError);
    expect(await new FolderLedger(dir).read(key)).toMatchObject({ state: 'submitted', jobNumber: 9 });
  });

  it('refuses the write of a holder whose lease was taken over, even where the entry is still as it saw it', async () => {
    const dir = await tempDir();
    const a = new FolderLedger(dir, { staleMs: 2000 });
    const b = new FolderLedger(dir, { staleMs: 2000, waitMs: 5000, now: () => Date.now() + 60_000 });
    const key = { account, orderNumber: 'PO-taken' };
    await a.write(entry(key, { state: 'failed' }), { guard: null });
    let locked!: () => void;
    const aHolds = new Promise<void>((resolve) => {
      locked = resolve;
    });
    let takenOver!: () => void;
    const bHolds = new Promise<void>((resolve) => {
      takenOver = resolve;
    });
    const late = a.withLock(key, async (guard) => {
      await a.read(key, { guard });
      locked();
      await bHolds;
      await a.write(entry(key, { attempts: 2 }), { guard });
    });
    await aHolds;
    // B holds the order now, and has not written it yet.
    await b.withLock(key, async () => {
      takenOver();
      await expect(late).rejects.toThrow(/was taken over by another process/);
    });
    expect(await b.read(key)).toMatchObject({ state: 'failed', attempts: 1 });
  });

  it.each(['intent', 'failed'] as const)(
    'refuses an entry (%s) when another process wrote the order since this holder read it',
    async (state) => {
      const dir = await tempDir();
      const a = new FolderLedger(dir);
      const b = new FolderLedger(dir);
      const key = { account, orderNumber: `PO-${state}` };
      await expect(
        a.withLock(key, async (guard) => {
          expect(await a.read(key, { guard })).toBeUndefined();
          // Another process writes it meanwhile, not under the lock (an older htorder, a tool).
          await b.write(entry(key, { state: 'submitted', jobNumber: 42 }), { guard: null });
          guard.assertHeld();
          await a.write(entry(key, { state }), { guard });
        }),
      ).rejects.toThrow(/another process wrote it since/);
      expect(await b.read(key)).toMatchObject({ state: 'submitted', jobNumber: 42 });
      expect(await temporaries(dir)).toEqual([]);
    },
  );

  it('writes an order again and again under its lock, read first or not', async () => {
    const dir = await tempDir();
    const a = new FolderLedger(dir);
    const key = { account, orderNumber: 'PO-own' };
    await a.write(entry(key, { state: 'failed' }), { guard: null });
    await a.withLock(key, async (guard) => {
      await a.write(entry(key, { attempts: 2 }), { guard });
      await a.write(entry(key, { state: 'submitted', jobNumber: 5, attempts: 2 }), { guard });
      expect(await a.read(key, { guard })).toMatchObject({ state: 'submitted' });
      await a.write(entry(key, { state: 'submitted', jobNumber: 5, attempts: 3 }), { guard });
    });
    expect(await a.read(key)).toMatchObject({ state: 'submitted', jobNumber: 5, attempts: 3 });
    expect(await temporaries(dir)).toEqual([]);
  });
});

describe('FolderLedger: a write names the lock it comes under', () => {
  it('refuses a write given no guard while this process holds the order, and writes nothing', async () => {
    const dir = await tempDir();
    const ledger = new FolderLedger(dir);
    const key = { account, orderNumber: 'PO-forgot' };
    await ledger.write(entry(key, { state: 'failed' }), { guard: null });
    await ledger.withLock(key, async (guard) => {
      await ledger.read(key, { guard });
      // A guard forgotten on the way: the late-write check would be skipped without a word.
      await expect(ledger.write(entry(key, { state: 'intent', attempts: 2 }), { guard: null })).rejects.toThrow(
        /without the guard .*which this process holds/,
      );
    });
    expect(await ledger.read(key)).toMatchObject({ state: 'failed', attempts: 1 });
    // Once let go, a write under no lock is a write as anyone's again.
    await ledger.write(entry(key, { state: 'failed', attempts: 3 }), { guard: null });
    expect(await ledger.read(key)).toMatchObject({ attempts: 3 });
    expect(await temporaries(dir)).toEqual([]);
  });

  it("refuses the guard of another order, and another ledger's guard of the same order", async () => {
    const dir = await tempDir();
    const a = new FolderLedger(dir);
    const b = new FolderLedger(dir);
    const one = { account, orderNumber: 'PO-one' };
    const two = { account, orderNumber: 'PO-two' };
    await a.withLock(one, async (guard) => {
      await expect(a.write(entry(two), { guard })).rejects.toThrow(/the guard of another lock/);
      await expect(a.read(two, { guard })).rejects.toThrow(/the guard of another lock/);
      await expect(b.write(entry(one), { guard })).rejects.toThrow(/the guard of another lock/);
    });
    expect(await a.read(one)).toBeUndefined();
    expect(await a.read(two)).toBeUndefined();
  });
});

describe("FolderLedger: an order's outcome goes into its intent's file", () => {
  const shardOf = async (dir: string, key: { orderNumber: string }) => {
    const orders = join(dir, 'ledger', safeName(account), 'orders');
    const name = `${safeName(key.orderNumber)}.json`;
    const found = (await readdir(orders, { recursive: true })).find((n) => n.endsWith(`/${name}`));
    if (!found) throw new Error(`no entry ${name}`);
    return { file: join(orders, found), shard: join(orders, found, '..') };
  };

  it('appends the outcome to the file its holder wrote the intent in: one file, no version kept, read as the outcome', async () => {
    const dir = await tempDir();
    const ledger = new FolderLedger(dir);
    const key = { account, orderNumber: 'PO-append' };
    let intentIno = 0n;
    await ledger.withLock(key, async (guard) => {
      expect(await ledger.read(key, { guard })).toBeUndefined();
      await ledger.write(entry(key), { guard });
      intentIno = statSync((await shardOf(dir, key)).file, { bigint: true }).ino;
      await ledger.write(entry(key, { state: 'submitted', jobNumber: 7 }), { guard, durable: false });
      expect(await ledger.read(key, { guard })).toMatchObject({ state: 'submitted', jobNumber: 7 });
    });
    const { file, shard } = await shardOf(dir, key);
    expect(statSync(file, { bigint: true }).ino).toBe(intentIno);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.map((l) => (l === '' ? '' : JSON.parse(l).state))).toEqual(['intent', 'submitted', '']);
    expect((await readdir(shard)).filter((n) => n.startsWith('.'))).toEqual([]);
    const again = new FolderLedger(dir);
    expect(await again.read(key)).toMatchObject({ state: 'submitted', jobNumber: 7 });
    const listed: string[] = [];
    for await (const e of again.entries(account)) listed.push(`${e.orderNumber}:${e.state}`);
    expect(listed).toEqual(['PO-append:submitted']);
  });

  it.each([
    ['cut short', '{"ledgerVersion":1,"account":"x","state":"subm'],
    ['zeros the file system left', '\0'.repeat(40)],
  ])('reads an outcome %s by a crash as the intent it follows: the order is in doubt, never lost', async (_, tail) => {
    const dir = await tempDir();
    const ledger = new FolderLedger(dir);
    const key = { account, orderNumber: 'PO-torn' };
    await ledger.write(entry(key), { guard: null });
    const { file } = await shardOf(dir, key);
    appendFileSync(file, tail);
    expect(await new FolderLedger(dir).read(key)).toMatchObject({ state: 'intent', orderNumber: 'PO-torn' });
    // The next write under the lock writes a whole new file: nothing is appended after a torn line.
    await ledger.withLock(key, async (guard) => {
      expect(await ledger.read(key, { guard })).toMatchObject({ state: 'intent' });
      await ledger.write(entry(key, { state: 'failed', error: 'refused' }), { guard });
    });
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(await new FolderLedger(dir).read(key)).toMatchObject({ state: 'failed' });
  });

  it("reads an older version's entry, one pretty-printed document, and refuses a file with no whole record", async () => {
    const dir = await tempDir();
    const ledger = new FolderLedger(dir);
    const key = { account, orderNumber: 'PO-pretty' };
    await ledger.write(entry(key), { guard: null });
    const { file } = await shardOf(dir, key);
    const old = entry(key, {
      state: 'submitted',
      jobNumber: 3,
      lines: [{ customerReference: 'a\nb', quantity: 5, newAssetSku: null, needsArtworkToBeUploaded: false }],
    });
    writeFileSync(file, `${JSON.stringify(old, null, 2)}\n`);
    expect(await ledger.read(key)).toEqual(old);
    // An outcome whole but for its newline is whole.
    writeFileSync(file, `${JSON.stringify(entry(key))}\n${JSON.stringify(old)}`);
    expect(await ledger.read(key)).toEqual(old);
    writeFileSync(file, '{"ledgerVersion":1,"acc');
    await expect(ledger.read(key)).rejects.toMatchObject({
      name: 'LedgerEntryUnreadableError',
      path: file,
      cause: expect.any(SyntaxError),
    });
  });
});

/** The temporaries of atomic writes left in the account's shards. */
async function temporaries(stateDir: string): Promise<string[]> {
  const orders = join(stateDir, 'ledger', safeName(account), 'orders');
  return (await readdir(orders, { recursive: true })).filter((n) => n.endsWith('.tmp'));
}
