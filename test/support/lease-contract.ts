import { spawnSync } from 'node:child_process';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ExpiryRule, HOST, isExpired, type Lease, type LeaseStore, parseLease } from '../../src/storage/lease.js';

/**
 * The one lease contract (src/storage/lease.ts) every LeaseStore passes: a folder, a bucket, a
 * database. An implementation joins it with one line in test/storage/lease-contract.test.ts,
 * `leaseContract('kind', () => subject)`, where the subject says how to make an instance of
 * the store and how to read and plant a record where the leases live.
 */
export interface LeaseSubject {
  /**
   * A new instance of the store (its own owner; a folder's, its own token). `now` is the
   * store's clock: the contract moves it instead of sleeping where it can.
   */
  store(leaseMs: number, rule?: ExpiryRule, now?: () => number): LeaseStore;
  /** A fresh lease name. */
  name(): string;
  /** The record stored under the name, as lease text (one line of JSON), or undefined when there is none. */
  read(name: string): Promise<string | undefined>;
  /** Stores `text` (lease text) under the name as a new record: what another holder's takeover leaves. */
  plant(name: string, text: string): Promise<void>;
}

export interface ContractOptions {
  /** Why the implementation cannot run here (no database server): the contract is skipped, saying so. */
  skip?: string;
}

const record = (pid: number, until: string, host = HOST): string =>
  `${JSON.stringify({ owner: 'someone-else', host, pid, until })}\n`;
const FAR = '2999-01-01T00:00:00.000Z';
/** The pid of a process of this host that has exited. */
const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());
const acquired = (leases: (Lease | undefined)[]): Lease[] => leases.filter((l): l is Lease => l !== undefined);
/**
 * How far the contract moves a store's clock to find a lease of 3 s that was not renewed expired.
 * A folder and a bucket judge by the moved clock itself; a database by its own now() when the
 * statement runs, shifted by the moved clock's distance from the real one as it was when the
 * statement was sent, so a statement's time on the way (long on a loaded machine) counts too: a
 * lease's length more is far beyond it.
 */
const PAST_LEASE = 2 * 3000;

export function leaseContract(
  kind: string,
  setUp: () => LeaseSubject | Promise<LeaseSubject>,
  options: ContractOptions = {},
): void {
  describe.skipIf(options.skip !== undefined)(
    `the lease contract: ${kind}${options.skip ? ` (${options.skip})` : ''}`,
    () => {
      let subject: LeaseSubject;
      beforeEach(async () => {
        subject = await setUp();
      });

      it('is acquired by one of many instances racing for a free name, and busy for all while held', async () => {
        const name = subject.name();
        const stores = Array.from({ length: 6 }, () => subject.store(30_000));
        const won = acquired(await Promise.all(stores.map((s) => s.tryAcquire(name))));
        expect(won).toHaveLength(1);
        expect(won[0]!.lost()).toBeUndefined();
        const held = parseLease((await subject.read(name)) ?? '');
        expect(held).toMatchObject({ host: HOST, pid: process.pid });
        expect(isExpired(held)).toBe(false);
        // Held: nobody else gets it, not even the holder's own store a second time.
        expect(acquired(await Promise.all(stores.map((s) => s.tryAcquire(name))))).toEqual([]);
      });

      it('is renewed by its holder: a later `until`, and still busy for others past the first one', async () => {
        let t = Date.now();
        const clock = (): number => t;
        const name = subject.name();
        const lease = (await subject.store(3000, {}, clock).tryAcquire(name))!;
        const before = parseLease((await subject.read(name))!)!.until;
        t += 2000;
        expect(await lease.renew()).toBe(true);
        expect(parseLease((await subject.read(name))!)!.until > before).toBe(true);
        // Past the first lease, within the renewed one: not expired to another instance.
        t += 2000;
        expect(await subject.store(3000, {}, clock).tryAcquire(name)).toBeUndefined();
        expect(lease.lost()).toBeUndefined();
      });

      it('is released: the name goes, and another instance takes it at once', async () => {
        const name = subject.name();
        const lease = (await subject.store(30_000).tryAcquire(name))!;
        await lease.release();
        expect(await subject.read(name)).toBeUndefined();
        expect(await subject.store(30_000).tryAcquire(name)).toBeDefined();
      });

      it('expires unrenewed, and is taken over by exactly one of many contenders; the old holder finds it lost', async () => {
        let t = Date.now();
        const clock = (): number => t;
        const name = subject.name();
        const old = (await subject.store(3000, {}, clock).tryAcquire(name))!;
        const contenders = Array.from({ length: 5 }, () => subject.store(30_000, {}, clock));
        expect(await contenders[0]!.tryAcquire(name)).toBeUndefined();
        t += PAST_LEASE;
        const won = acquired(await Promise.all(contenders.map((s) => s.tryAcquire(name))));
        expect(won).toHaveLength(1);
        // "Still mine?" — no: checked where the lease lives, and lost() says so from then on.
        expect(await old.renew()).toBe(false);
        expect(old.lost()).toBeInstanceOf(Error);
        // Its release leaves the new holder's lease alone.
        await old.release();
        expect(parseLease((await subject.read(name)) ?? '')).toBeDefined();
        expect(await won[0]!.renew()).toBe(true);
        expect(won[0]!.lost()).toBeUndefined();
      });

      it('is never taken over by the instance holding it, however late its renewal; by another, once expired', async () => {
        let t = Date.now();
        const clock = (): number => t;
        const name = subject.name();
        const mine = subject.store(3000, {}, clock);
        const lease = (await mine.tryAcquire(name))!;
        // Its holder stalled past its lease: to its own instance it is still no orphan.
        t += 3001;
        expect(await mine.tryAcquire(name)).toBeUndefined();
        expect(await lease.renew()).toBe(true);
        expect(lease.lost()).toBeUndefined();
        // Expired again unrenewed: its own instance still leaves it alone, another takes it over.
        t += PAST_LEASE;
        expect(await mine.tryAcquire(name)).toBeUndefined();
        const taken = await subject.store(3000, {}, clock).tryAcquire(name);
        expect(taken).toBeDefined();
        expect(await lease.renew()).toBe(false);
        expect(lease.lost()).toBeInstanceOf(Error);
        // Lost to another, released, it is no longer its instance's to keep from itself.
        await taken!.release();
        expect(await mine.tryAcquire(name)).toBeDefined();
      });

      it('is lost once another holder replaced it, and never comes back', async () => {
        const name = subject.name();
        const lease = (await subject.store(30_000).tryAcquire(name))!;
        await subject.plant(name, record(process.pid, FAR));
        expect(await lease.renew()).toBe(false);
        expect(lease.lost()?.message).toBeTruthy();
        expect(await lease.renew()).toBe(false);
        expect(lease.lost()).toBeInstanceOf(Error);
        await lease.release();
        expect(parseLease((await subject.read(name))!)?.owner).toBe('someone-else');
      });

      it("is taken over at once when its holder's process is gone from this host, unless it survives its holder", async () => {
        const name = subject.name();
        await subject.plant(name, record(deadPid(), FAR));
        expect(await subject.store(30_000, { survivesHolder: true }).tryAcquire(name)).toBeUndefined();
        expect(await subject.store(30_000).tryAcquire(name)).toBeDefined();
        // A live holder (our parent) keeps it, whatever the rule.
        const live = subject.name();
        await subject.plant(live, record(process.ppid, FAR));
        expect(await subject.store(30_000).tryAcquire(live)).toBeUndefined();
        // A holder on another host is judged by its lease alone: kept until it runs out.
        const far = subject.name();
        await subject.plant(far, record(deadPid(), FAR, `not-${HOST}`));
        expect(await subject.store(30_000).tryAcquire(far)).toBeUndefined();
        const ended = subject.name();
        await subject.plant(ended, record(process.ppid, '2000-01-01T00:00:00.000Z', `not-${HOST}`));
        expect(await subject.store(30_000, { survivesHolder: true }).tryAcquire(ended)).toBeDefined();
      });
    },
  );
}
