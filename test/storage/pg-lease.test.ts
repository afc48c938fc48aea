import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExpiryRule, type LeaseStore, parseLease } from '../../src/storage/lease.js';
import { PgDatabase } from '../../src/storage/pg/pg-database.js';
import { PgLeases } from '../../src/storage/pg/pg-lease.js';
import { pgClusterForFile } from '../support/pg-cluster.js';

/**
 * What only leases in PostgreSQL do, beside the one lease contract they pass with folders and
 * buckets (test/storage/lease-contract.test.ts): time judged by the DATABASE's clock, and rows
 * that outlive a restart of the database. Each store made by `store()` is one instance.
 */
interface Subject {
  store(leaseMs: number, rule?: ExpiryRule, now?: () => number): LeaseStore;
  name(): string;
  read(name: string): Promise<string | undefined>;
  plant(name: string, text: string): Promise<void>;
}

const cluster = await pgClusterForFile();

describe.skipIf(!cluster)('leases in a PostgreSQL database', () => {
  let db: PgDatabase;
  let n = 0;
  beforeAll(async () => {
    const url = new URL((await cluster?.createDatabase()) ?? '');
    db = new PgDatabase({
      connection: cluster!.connection(url.href),
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
