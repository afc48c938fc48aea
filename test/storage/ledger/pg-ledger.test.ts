import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../../src/core/errors.js';
import { type LedgerEntry, type LedgerKey, LockLostError } from '../../../src/storage/ledger/model.js';
import { PgLedger } from '../../../src/storage/ledger/pg-ledger.js';
import { PgDatabase } from '../../../src/storage/pg/pg-database.js';
import { DIST, requireDist } from '../../support/dist.js';
import { startHeldLink } from '../../support/held-link.js';
import { pgClusterForFile } from '../../support/pg-cluster.js';

const cluster = await pgClusterForFile();
const account = 'https://api.us.example.com#1001';

const entry = (key: LedgerKey, over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  ledgerVersion: 1,
  account: key.account,
  orderNumber: key.orderNumber,
  payloadHash: 'h',
  state: 'intent',
  attempts: 1,
  intentAt: '2026-11-21T00:00:00.000Z',
  ...over,
});

/** The connection settings of a URL of the test cluster. */
describe.skipIf(!cluster)('the PostgreSQL ledger', () => {
  const opened: PgDatabase[] = [];
  const open = (url: string, waitMs = 20_000, leaseMs = 2000): PgLedger => {
    const db = new PgDatabase({ connection: cluster!.connection(url), name: url, waitMs });
    opened.push(db);
    return new PgLedger(db, { leaseMs });
  };
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close();
  });
  const fresh = async (): Promise<string> => (await cluster?.createDatabase()) ?? '';

  it('keeps entries per account and order number, accounts and notes, listed in byte order', async () => {
    const ledger = open(await fresh());
    const a = { account, orderNumber: 'PO-1' };
    const b = { account, orderNumber: 'PO/2 ..' };
    await ledger.write(entry(a), { guard: null });
    await ledger.write(entry(b, { state: 'submitted', jobNumber: 7 }), { guard: null });
    await ledger.write(entry({ account: 'other#2', orderNumber: 'PO-1' }, { state: 'failed' }), { guard: null });
    expect(await ledger.read(b)).toMatchObject({ state: 'submitted', jobNumber: 7 });
    expect(await ledger.read({ account, orderNumber: 'nope' })).toBeUndefined();
    // An entry written again replaces the old one whole.
    await ledger.write(entry(a, { state: 'submitted', jobNumber: 8 }), { guard: null });
    expect(await ledger.read(a)).toEqual(entry(a, { state: 'submitted', jobNumber: 8 }));
    const mine: string[] = [];
    for await (const e of ledger.entries(account)) mine.push(e.orderNumber);
    expect(mine).toEqual(['PO-1', 'PO/2 ..']);
    let all = 0;
    for await (const _ of ledger.entries()) all++;
    expect(all).toBe(3);
    expect(await ledger.readAccount(account)).toBeUndefined();
    await ledger.writeAccount({ ledgerVersion: 1, account, vouchedSince: '2026-11-21T00:00:00.000Z' });
    expect(await ledger.readAccount(account)).toMatchObject({ vouchedSince: '2026-11-21T00:00:00.000Z' });
    await ledger.writeNote(account, '.approval-b', { n: 2 });
    await ledger.writeNote(account, '.approval-a', { n: 1 });
    await ledger.writeNote(account, '.spent-2026-11-21', { orders: {} });
    expect(await ledger.listNotes(account, '.approval-')).toEqual(['.approval-a', '.approval-b']);
    expect(await ledger.readNote(account, '.approval-a')).toEqual({ n: 1 });
    await expect(ledger.readNote(account, 'no-dot')).rejects.toThrow(/not a ledger note name/);
  });

  it('has one id, the same for every host, another for another database', async () => {
    const url = await fresh();
    const [a, b] = await Promise.all([open(url).ledgerId(), open(url).ledgerId()]);
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(b).toBe(a);
    expect(await open(url).ledgerId()).toBe(a);
    expect(await open(await fresh()).ledgerId()).not.toBe(a);
  });

  it('removes expired notes in its upkeep, keeping entries whole', async () => {
    const ledger = open(await fresh());
    await ledger.write(entry({ account, orderNumber: 'PO-old' }, { state: 'submitted', jobNumber: 1 }), {
      guard: null,
    });
    await ledger.writeNote(account, '.content-old', { at: 100 });
    await ledger.writeNote(account, '.content-new', { at: 900 });
    await ledger.writeNote(account, '.spent-x', { at: 100 });
    const result = await ledger.compact(account, {
      foldBefore: Date.now(),
      notes: [
        {
          prefix: '.content-',
          before: 500,
          at: (v) => (v as { at: number }).at,
        },
      ],
    });
    expect(result).toEqual({ folded: 0, notes: 1, moved: 0 });
    expect(await ledger.listNotes(account, '.content-')).toEqual(['.content-new']);
    expect(await ledger.readNote(account, '.spent-x')).toEqual({ at: 100 });
    expect(await ledger.read({ account, orderNumber: 'PO-old' })).toMatchObject({ jobNumber: 1 });
  });

  it('lists a ledger larger than a page in key order, every entry once', async () => {
    const ledger = open(await fresh());
    const numbers = Array.from({ length: 1203 }, (_, i) => `PO-${String(i).padStart(5, '0')}`);
    for (let i = 0; i < numbers.length; i += 100)
      await Promise.all(
        numbers.slice(i, i + 100).map((n) => ledger.write(entry({ account, orderNumber: n }), { guard: null })),
      );
    const seen: string[] = [];
    for await (const e of ledger.entries(account)) seen.push(e.orderNumber);
    expect(seen).toEqual(numbers);
  });

  it('updates a note in one transaction: hosts counting into one day lose no update', async () => {
    const url = await fresh();
    const hosts = [open(url), open(url), open(url)];
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        hosts[i % 3]!.updateNote<{ orders: Record<string, number> }>(account, '.spent-2026-11-21', async (note) => {
          await sleep(1);
          return { orders: { ...note?.orders, [`PO-${i}`]: 1 } };
        }),
      ),
    );
    const note = await hosts[0]!.readNote<{ orders: Record<string, number> }>(account, '.spent-2026-11-21');
    expect(Object.keys(note?.orders ?? {})).toHaveLength(60);
  });

  it('applies its schema once however many hosts start at once, and refuses a newer one', async () => {
    const url = await fresh();
    const hosts = Array.from({ length: 5 }, () => open(url));
    await Promise.all(hosts.map((h) => h.readAccount(account)));
    const rows = await cluster!.sql<{ version: number }>(
      'SELECT version FROM htorder.migrations',
      new URL(url).pathname.slice(1),
    );
    expect(rows).toEqual([{ version: 1 }]);
    await cluster!.sql(
      "INSERT INTO htorder.migrations (version, description) VALUES (99, 'from the future')",
      new URL(url).pathname.slice(1),
    );
    await expect(open(url).readAccount(account)).rejects.toThrow(/schema 99 by a newer htorder.*upgrade htorder/);
  });

  it('waits for a database that restarts, and gives up after ledgerWaitMs with exit 3 (StoreUnavailableError)', async () => {
    const url = await fresh();
    const ledger = open(url, 20_000);
    const key = { account, orderNumber: 'PO-restart' };
    await ledger.write(entry(key), { guard: null });
    await cluster!.stop();
    const write = ledger.write(entry(key, { state: 'submitted', jobNumber: 41 }), { guard: null });
    await sleep(1500);
    await cluster!.start();
    await write;
    expect(await ledger.read(key)).toMatchObject({ state: 'submitted', jobNumber: 41 });
    const impatient = open(url, 800);
    await impatient.read(key);
    await cluster!.stop();
    try {
      const failed = await impatient.read(key).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      expect((failed as Error).message).toMatch(/cannot reach the ledger database .*waited 1 s; setting ledgerWaitMs/);
      expect((failed as Error).message).not.toContain(cluster!.password);
    } finally {
      await cluster!.start();
    }
  }, 60_000);

  it('runs a note update cut short by a database restart again once the database is back', async () => {
    const ledger = open(await fresh(), 20_000);
    let runs = 0;
    let back: Promise<void> | undefined;
    await ledger.updateNote<{ n: number }>(account, '.spent-2026-11-21', async (note) => {
      runs++;
      if (runs === 1) {
        // The server goes away while the transaction waits: told to its connection as an event.
        await cluster!.stop();
        back = sleep(500).then(() => cluster!.start());
      }
      return { n: (note?.n ?? 0) + 1 };
    });
    await back;
    expect(runs).toBe(2);
    expect(await ledger.readNote(account, '.spent-2026-11-21')).toEqual({ n: 1 });
  }, 30_000);

  it.each(['intent', 'failed'] as const)(
    "refuses an entry (%s) written under an order lock its writer no longer holds, keeping the new holder's outcome",
    async (state) => {
      // Host A's write is stuck on the way to the database past its lock's lease (a network
      // stall; a restart while the write is retried); host B takes the order over, creates it and
      // records it submitted. A's write arriving afterwards must not set the order back to intent
      // (in doubt, with its input already done) — nor to failed, which would allow a second create.
      const url = await fresh();
      const link = await startHeldLink(cluster!.port);
      try {
        const db = new PgDatabase({
          connection: { ...cluster!.connection(url), port: link.port },
          name: url,
          waitMs: 20_000,
        });
        opened.push(db);
        const hostA = new PgLedger(db, { leaseMs: 600 });
        const hostB = open(url, 20_000, 600);
        const key = { account, orderNumber: `PO-stale-${state}` };
        let stuck!: () => void;
        const aHolds = new Promise<void>((resolve) => (stuck = resolve));
        const a = hostA.withLock(key, async (guard) => {
          link.hold();
          const write = hostA.write(entry(key, { state, attempts: 1 }), { guard });
          stuck();
          return write;
        });
        const aWrote = a.then(
          () => 'landed',
          (err: unknown) => err,
        );
        await aHolds;
        // B waits for A's lease to run out in the database's time, then takes the order over.
        await hostB.withLock(key, async (guard) => {
          await hostB.write(entry(key, { attempts: 1 }), { guard });
          guard.assertHeld();
          await hostB.write(entry(key, { state: 'submitted', attempts: 1, jobNumber: 77, settledBy: 'response' }), {
            guard,
          });
        });
        link.release();
        const outcome = await aWrote;
        expect(await hostB.read(key)).toMatchObject({ state: 'submitted', jobNumber: 77 });
        expect(outcome).toBeInstanceOf(LockLostError);
        expect((outcome as Error).message).toMatch(/lost the ledger lock of order "PO-stale-/);
        // Outside an order's lock (an import, an admin's fix) a write is as before.
        await hostA.write(entry({ account, orderNumber: `PO-free-${state}` }, { state: 'failed' }), { guard: null });
        expect(await hostB.read({ account, orderNumber: `PO-free-${state}` })).toMatchObject({ state: 'failed' });
      } finally {
        link.release();
        await link.close();
      }
    },
    30_000,
  );

  it('refuses a write given no guard while this host holds the order, or the guard of another order', async () => {
    const ledger = open(await fresh());
    const key = { account, orderNumber: 'PO-guard' };
    await ledger.write(entry(key, { state: 'failed' }), { guard: null });
    await ledger.withLock(key, async (guard) => {
      await expect(ledger.write(entry(key), { guard: null })).rejects.toThrow(/without the guard/);
      const other = { account, orderNumber: 'PO-other' };
      await expect(ledger.write(entry(other), { guard })).rejects.toThrow(/the guard of another lock/);
      await expect(ledger.read(other, { guard })).rejects.toThrow(/the guard of another lock/);
    });
    expect(await ledger.read(key)).toMatchObject({ state: 'failed' });
    expect(await ledger.read({ account, orderNumber: 'PO-other' })).toBeUndefined();
  });

  it('says a wrong password is refused, without the password', async () => {
    const url = await fresh();
    const db = new PgDatabase({
      connection: { ...cluster!.connection(url), password: 'not-the-password' },
      name: url,
      waitMs: 5000,
    });
    opened.push(db);
    const failed = await new PgLedger(db, { leaseMs: 2000 }).readAccount(account).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toMatch(/refused the credentials/);
    expect((failed as Error).message).not.toContain('not-the-password');
  });

  describe('across processes', () => {
    beforeAll(() => requireDist());

    const worker = (url: string, orderNumber: string, rounds: number, holdMs = 0) => `
      import { PgDatabase } from ${JSON.stringify(join(DIST, 'storage/pg/pg-database.js'))};
      import { PgLedger } from ${JSON.stringify(join(DIST, 'storage/ledger/pg-ledger.js'))};
      const db = new PgDatabase({ connection: ${JSON.stringify(cluster!.connection(url))}, name: 'test', waitMs: 20000 });
      const ledger = new PgLedger(db, { leaseMs: 2000 });
      const key = { account: ${JSON.stringify(account)}, orderNumber: ${JSON.stringify(orderNumber)} };
      for (let i = 0; i < ${rounds}; i++) {
        await ledger.withLock(key, async (guard) => {
          const cur = (await ledger.read(key, { guard }))?.attempts ?? 0;
          if (${holdMs} > 0) { process.stdout.write('holding\\n'); await new Promise(r => setTimeout(r, ${holdMs})); }
          await new Promise(r => setTimeout(r, 1));
          await ledger.write({ ledgerVersion: 1, account: key.account, orderNumber: key.orderNumber,
            payloadHash: 'h', state: 'intent', attempts: cur + 1, intentAt: new Date().toISOString() }, { guard });
        });
      }
      await db.close();`;
    const run = (code: string) =>
      spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exit = (child: ReturnType<typeof run>): Promise<number | null> =>
      new Promise((resolve) => child.on('exit', (code) => resolve(code)));

    it('four processes incrementing one order never lose an update', async () => {
      const url = await fresh();
      const children = Array.from({ length: 4 }, () => run(worker(url, 'PO-multi', 10)));
      expect(await Promise.all(children.map(exit))).toEqual([0, 0, 0, 0]);
      expect((await open(url).read({ account, orderNumber: 'PO-multi' }))?.attempts).toBe(40);
    }, 30_000);

    it("keeps a SIGKILLed holder's order lock until its lease runs out (its POST may still be on the wire), then hands it over", async () => {
      const url = await fresh();
      const holder = run(worker(url, 'PO-kill', 1, 60_000));
      await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
      holder.kill('SIGKILL');
      await exit(holder);
      const killedAt = Date.now();
      const ledger = open(url, 20_000, 2000);
      const ran = await ledger.withLock({ account, orderNumber: 'PO-kill' }, async (guard) => {
        guard.assertHeld();
        return Date.now() - killedAt;
      });
      // Not at once, although its connection (and any advisory lock) died with it.
      expect(ran).toBeGreaterThan(1000);
    }, 30_000);
  });
});
