import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExpiryRule, HOST, isExpired, type Lease, type LeaseStore, parseLease } from '../../src/storage/lease.js';
import { PgDatabase } from '../../src/storage/pg/pg-database.js';
import { PgLeases } from '../../src/storage/pg/pg-lease.js';
import { pgClusterForFile } from '../support/pg-cluster.js';

/**
 * The lease contract (src/storage/lease.ts; test/storage/lease.test.ts runs it for folders and
 * buckets) for leases in PostgreSQL: the same cases, written in the same shape so the one
 * contract can take them in. Each store made by `store()` is one instance. `now` moves the
 * store's view of the DATABASE's clock, which is the only clock these leases are judged by.
 */
interface Subject {
  store(leaseMs: number, rule?: ExpiryRule, now?: () => number): LeaseStore;
  name(): string;
  read(name: string): Promise<string | undefined>;
  plant(name: string, text: string): Promise<void>;
}

const cluster = await pgClusterForFile();

const record = (pid: number, until: string): string =>
  `${JSON.stringify({ owner: 'someone-else', host: HOST, pid, until })}\n`;
const FAR = '2999-01-01T00:00:00.000Z';
const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());
const acquired = (leases: (Lease | undefined)[]): Lease[] => leases.filter((l): l is Lease => l !== undefined);

describe.skipIf(!cluster)('the lease contract: a PostgreSQL database', () => {
  let db: PgDatabase;
  let n = 0;
  beforeAll(async () => {
    const url = new URL((await cluster?.createDatabase()) ?? '');
    db = new PgDatabase({
      connection: {
        host: url.hostname,
        port: Number(url.port),
        user: cluster?.user,
        password: cluster?.password,
        database: url.pathname.slice(1),
      },
      name: url.href,
      waitMs: 5000,
    });
  });
  afterAll(() => db?.close());

  const row = async (name: string) =>
    (
      await db.query<{ owner: string; host: string; pid: number; until: Date }>(
        'SELECT owner, host, pid, until FROM htorder.leases WHERE name = $1',
        [name],
      )
    ).rows[0];
  const subject = (): Subject => ({
    store: (leaseMs, rule = {}, now) => new PgLeases(db, { leaseMs, ...rule, ...(now ? { now } : {}) }),
    name: () => `leases/${process.pid}-${n++}.claim`,
    read: async (name) => {
      const r = await row(name);
      return r && `${JSON.stringify({ owner: r.owner, host: r.host, pid: r.pid, until: r.until.toISOString() })}\n`;
    },
    plant: async (name, text) => {
      const r = parseLease(text);
      await db.query(
        `INSERT INTO htorder.leases (name, owner, host, pid, until) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, host = EXCLUDED.host, pid = EXCLUDED.pid, until = EXCLUDED.until`,
        [name, r?.owner, r?.host, r?.pid, r?.until],
      );
    },
  });

  it('is exclusive: of many instances racing for one name, exactly one gets it', async () => {
    const s = subject();
    const name = s.name();
    const stores = Array.from({ length: 6 }, () => s.store(30_000));
    const won = acquired(await Promise.all(stores.map((x) => x.tryAcquire(name))));
    expect(won).toHaveLength(1);
    expect(won[0]!.lost()).toBeUndefined();
    const held = parseLease((await s.read(name)) ?? '');
    expect(held).toMatchObject({ host: HOST, pid: process.pid });
    expect(isExpired(held)).toBe(false);
    expect(acquired(await Promise.all(stores.map((x) => x.tryAcquire(name))))).toEqual([]);
  });

  it('is renewed by its holder: a later `until`, still held', async () => {
    const s = subject();
    const name = s.name();
    const lease = (await s.store(600).tryAcquire(name))!;
    const before = parseLease((await s.read(name))!)!.until;
    await sleep(150);
    expect(await lease.renew()).toBe(true);
    expect(parseLease((await s.read(name))!)!.until > before).toBe(true);
    expect(lease.lost()).toBeUndefined();
  });

  it('expires unrenewed, and is then taken over by exactly one contender; the old holder finds it lost', async () => {
    const s = subject();
    const name = s.name();
    const old = (await s.store(300).tryAcquire(name))!;
    const contenders = Array.from({ length: 5 }, () => s.store(30_000));
    expect(await contenders[0]!.tryAcquire(name)).toBeUndefined();
    await sleep(350);
    const won = acquired(await Promise.all(contenders.map((x) => x.tryAcquire(name))));
    expect(won).toHaveLength(1);
    expect(await old.renew()).toBe(false);
    expect(old.lost()).toBeInstanceOf(Error);
    await old.release();
    expect(await s.read(name)).toBeDefined();
    expect(await won[0]!.renew()).toBe(true);
    expect(won[0]!.lost()).toBeUndefined();
  });

  it('is never taken over by the instance holding it, however late its renewal; by another, once expired', async () => {
    const s = subject();
    let t = Date.now();
    const clock = (): number => t;
    const name = s.name();
    const mine = s.store(3000, {}, clock);
    const lease = (await mine.tryAcquire(name))!;
    t += 3001;
    expect(await mine.tryAcquire(name)).toBeUndefined();
    expect(await lease.renew()).toBe(true);
    t += 3001;
    expect(await mine.tryAcquire(name)).toBeUndefined();
    const taken = await s.store(3000, {}, clock).tryAcquire(name);
    expect(taken).toBeDefined();
    expect(await lease.renew()).toBe(false);
    await taken!.release();
    expect(await mine.tryAcquire(name)).toBeDefined();
  });

  it('is lost once another holder replaced it, and never comes back', async () => {
    const s = subject();
    const name = s.name();
    const lease = (await s.store(30_000).tryAcquire(name))!;
    await s.plant(name, record(process.pid, FAR));
    expect(await lease.renew()).toBe(false);
    expect(lease.lost()?.message).toBeTruthy();
    expect(await lease.renew()).toBe(false);
    await lease.release();
    expect(parseLease((await s.read(name))!)?.owner).toBe('someone-else');
  });

  it('is released: the name goes, and another instance takes it at once', async () => {
    const s = subject();
    const name = s.name();
    const lease = (await s.store(30_000).tryAcquire(name))!;
    await lease.release();
    expect(await s.read(name)).toBeUndefined();
    expect(await s.store(30_000).tryAcquire(name)).toBeDefined();
  });

  it("is taken over at once when its holder's process is gone from this host, unless it survives its holder", async () => {
    const s = subject();
    const name = s.name();
    await s.plant(name, record(deadPid(), FAR));
    expect(await s.store(30_000, { survivesHolder: true }).tryAcquire(name)).toBeUndefined();
    expect(await s.store(30_000).tryAcquire(name)).toBeDefined();
    const other = s.name();
    await s.plant(other, record(process.ppid, FAR));
    expect(await s.store(30_000).tryAcquire(other)).toBeUndefined();
  });

  it("judges time by the database's clock: a host whose clock runs an hour ahead neither steals nor loses a live lease", async () => {
    const s = subject();
    const name = s.name();
    // The holder's own clock is irrelevant: its lease's `until` comes from the database.
    const lease = (await s.store(2000).tryAcquire(name))!;
    const skewed = new PgLeases(db, { leaseMs: 2000 });
    // A host an hour ahead judges by the database too (`now` is not passed: its clock plays no part).
    const realNow = Date.now;
    Date.now = () => realNow() + 3_600_000;
    try {
      expect(await skewed.tryAcquire(name)).toBeUndefined();
    } finally {
      Date.now = realNow;
    }
    expect(lease.lost()).toBeUndefined();
    expect(await lease.renew()).toBe(true);
  });

  it('holds across a database restart: the row outlives the connection; a holder that could not renew in time finds it lost', async () => {
    const s = subject();
    const name = s.name();
    const kept = (await s.store(60_000).tryAcquire(name))!;
    const short = s.name();
    const brief = (await s.store(400).tryAcquire(short))!;
    await cluster?.stop();
    await sleep(500);
    await expect(brief.renew()).rejects.toThrow();
    expect(brief.lost()?.message).toMatch(/ran out before it could be renewed/);
    await cluster?.start();
    // The lease that had time left is still its holder's, and still keeps others out.
    expect(await s.store(60_000).tryAcquire(name)).toBeUndefined();
    expect(await kept.renew()).toBe(true);
  });
});
