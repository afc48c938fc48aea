import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { lutimes } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BucketLeases } from '../../src/storage/bucket-lease.js';
import { FolderLeases, isLeaseToken } from '../../src/storage/folder-lease.js';
import { type ExpiryRule, HOST, isExpired, type Lease, type LeaseStore, parseLease } from '../../src/storage/lease.js';
import { DIST, requireDist } from '../support/dist.js';
import { s3Fixture } from '../support/s3.js';
import { tempDir } from '../support/temp-files.js';

/**
 * The lease contract (src/storage/lease.ts), run against each implementation: a folder (with
 * hard links, and where they are refused) and a bucket (the in-process S3 server). Each store
 * made by `store()` is one instance: its own owner, and for a folder its own token.
 */
interface Subject {
  /** `now`: the store's clock (tests move it instead of sleeping). */
  store(leaseMs: number, rule?: ExpiryRule, now?: () => number): LeaseStore;
  /** A fresh lease name. */
  name(): string;
  /** The text stored under the name, or undefined when there is none. */
  read(name: string): Promise<string | undefined>;
  /** Stores `text` under the name as a new file or object (what another holder's takeover leaves). */
  plant(name: string, text: string): Promise<void>;
}

const record = (pid: number, until: string): string =>
  `${JSON.stringify({ owner: 'someone-else', host: HOST, pid, until })}\n`;
const FAR = '2999-01-01T00:00:00.000Z';
const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

const acquired = (leases: (Lease | undefined)[]): Lease[] => leases.filter((l): l is Lease => l !== undefined);

function contract(kind: string, setUp: () => Subject): void {
  describe(`the lease contract: ${kind}`, () => {
    let subject: Subject;
    beforeEach(() => {
      subject = setUp();
    });

    it('is exclusive: of many instances racing for one name, exactly one gets it', async () => {
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

    it('is renewed by its holder: a later `until`, still held', async () => {
      const name = subject.name();
      const lease = (await subject.store(600).tryAcquire(name))!;
      const before = parseLease((await subject.read(name))!)!.until;
      await sleep(150); // past a sixth of the lease
      expect(await lease.renew()).toBe(true);
      expect(parseLease((await subject.read(name))!)!.until > before).toBe(true);
      expect(lease.lost()).toBeUndefined();
    });

    it('expires unrenewed, and is then taken over by exactly one contender; the old holder finds it lost', async () => {
      const name = subject.name();
      const old = (await subject.store(300).tryAcquire(name))!;
      const contenders = Array.from({ length: 5 }, () => subject.store(30_000));
      expect(await contenders[0]!.tryAcquire(name)).toBeUndefined();
      await sleep(350);
      const won = acquired(await Promise.all(contenders.map((s) => s.tryAcquire(name))));
      expect(won).toHaveLength(1);
      // "Still mine?" — no: checked where the lease lives.
      expect(await old.renew()).toBe(false);
      expect(old.lost()).toBeInstanceOf(Error);
      // Its release leaves the new holder's lease alone.
      await old.release();
      expect(await subject.read(name)).toBeDefined();
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
      t += 3001;
      expect(await mine.tryAcquire(name)).toBeUndefined();
      const taken = await subject.store(3000, {}, clock).tryAcquire(name);
      expect(taken).toBeDefined();
      expect(await lease.renew()).toBe(false);
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
      await lease.release();
      expect(parseLease((await subject.read(name))!)?.owner).toBe('someone-else');
    });

    it('is released: the name goes, and another instance takes it at once', async () => {
      const name = subject.name();
      const lease = (await subject.store(30_000).tryAcquire(name))!;
      await lease.release();
      expect(await subject.read(name)).toBeUndefined();
      expect(await subject.store(30_000).tryAcquire(name)).toBeDefined();
    });

    it("is taken over at once when its holder's process is gone from this host, unless it survives its holder", async () => {
      const name = subject.name();
      await subject.plant(name, record(deadPid(), FAR));
      expect(await subject.store(30_000, { survivesHolder: true }).tryAcquire(name)).toBeUndefined();
      expect(await subject.store(30_000).tryAcquire(name)).toBeDefined();
      // A live holder (our parent) keeps it, whatever the rule.
      const other = subject.name();
      await subject.plant(other, record(process.ppid, FAR));
      expect(await subject.store(30_000).tryAcquire(other)).toBeUndefined();
    });
  });
}

describe('folder leases', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const opened: FolderLeases[] = [];
  beforeEach(async () => {
    dir = await tempDir('htorder-lease-');
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) s.close();
    await dir.remove();
  });

  let n = 0;
  const folderSubject = (refuseLinks: boolean): Subject => ({
    store(leaseMs, rule = {}, now) {
      const refuse = (): void => {
        throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' });
      };
      const s = new FolderLeases({
        owner: `owner-${n++}`,
        leaseMs,
        ...rule,
        ...(now ? { now } : {}),
        ...(refuseLinks ? { link: refuse } : {}),
      });
      opened.push(s);
      return s;
    },
    name: () => join(dir.path, `.lease-${n++}.claim`),
    read: async (name) => {
      try {
        return readFileSync(name, 'utf8');
      } catch {
        return undefined;
      }
    },
    plant: async (name, text) => {
      try {
        unlinkSync(name);
      } catch {
        // Not there yet.
      }
      writeFileSync(name, text);
    },
  });

  contract('a folder', () => folderSubject(false));
  contract('a folder without hard links', () => folderSubject(true));

  const store = (leaseMs = 30_000): FolderLeases => {
    const s = new FolderLeases({ owner: 'me', leaseMs });
    opened.push(s);
    return s;
  };
  const tokens = (): string[] => readdirSync(dir.path).filter(isLeaseToken);

  it('links every lease of an instance to its one token; a renewal rewrites it in place', async () => {
    const s = store(600);
    const a = (await s.tryAcquire(join(dir.path, 'a.lock')))!;
    await s.tryAcquire(join(dir.path, 'b.lock'));
    expect(tokens()).toHaveLength(1);
    const token = lstatSync(join(dir.path, tokens()[0]!));
    expect(token.nlink).toBe(3);
    expect(lstatSync(join(dir.path, 'a.lock')).ino).toBe(token.ino);
    await sleep(150);
    await a.renew();
    expect(lstatSync(join(dir.path, 'b.lock')).ino).toBe(token.ino);
    expect(readFileSync(join(dir.path, 'b.lock'), 'utf8')).toBe(readFileSync(join(dir.path, 'a.lock'), 'utf8'));
    s.close();
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('never follows a link planted at a lease name: judged, moved and removed as itself', async () => {
    const victim = join(dir.path, 'victim.txt');
    const live = record(process.ppid, FAR);
    writeFileSync(victim, live);
    const name = join(dir.path, 'v.lock');
    symlinkSync(victim, name);
    // Not the victim's live record: the link has none, and is fresh.
    expect(await store(1000).tryAcquire(name)).toBeUndefined();
    const old = new Date(Date.now() - 60_000);
    await lutimes(name, old, old);
    const lease = (await store(1000).tryAcquire(name))!;
    expect(lease).toBeDefined();
    expect(lstatSync(name).isFile()).toBe(true);
    await lease.release();
    expect(readFileSync(victim, 'utf8')).toBe(live);
    expect(readdirSync(dir.path).filter((f) => !isLeaseToken(f))).toEqual(['victim.txt']);
  });

  it('never writes through a link swapped in for its token', async () => {
    const victim = join(dir.path, 'victim.txt');
    writeFileSync(victim, 'keep');
    const s = store(600);
    const lease = (await s.tryAcquire(join(dir.path, 't.lock')))!;
    const token = join(dir.path, tokens()[0]!);
    unlinkSync(token);
    symlinkSync(victim, token);
    await sleep(150);
    expect(await lease.renew()).toBe(true); // the lease name still leads to its inode
    s.close();
    expect(readFileSync(victim, 'utf8')).toBe('keep');
  });

  it('of processes racing to take over expired leases, exactly one holds each', async () => {
    requireDist();
    const names = Array.from({ length: 400 }, (_, i) => join(dir.path, `race-${i}.lock`));
    for (const name of names) writeFileSync(name, record(process.pid, '2000-01-01T00:00:00.000Z'));
    const start = Date.now() + 1500;
    // Each racer says what it won, then holds on until killed: none releases while others race.
    const racer = `
      import { FolderLeases } from ${JSON.stringify(join(DIST, 'storage/folder-lease.js'))};
      const leases = new FolderLeases({ owner: 'racer-' + process.pid, leaseMs: 30000 });
      while (Date.now() < ${start}) {}
      const won = [];
      for (const name of ${JSON.stringify(names)}) {
        const lease = await leases.tryAcquire(name);
        if (lease) won.push({ name, lease });
      }
      // A lease put back by a contender that moved it aside by mistake may be lost meanwhile:
      // its holder knows, and holds only what it still holds.
      process.stdout.write(JSON.stringify(won.filter((w) => !w.lease.lost()).map((w) => w.name)) + '\\n');
      setInterval(() => {}, 1000);`;
    const children = Array.from({ length: 4 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', racer], { stdio: ['ignore', 'pipe', 'inherit'] }),
    );
    const runs = children.map(
      (child) =>
        new Promise<string[]>((resolve, reject) => {
          let out = '';
          child.stdout.on('data', (d) => {
            out += d;
            if (out.endsWith('\n')) resolve(JSON.parse(out) as string[]);
          });
          child.on('exit', (code) => reject(new Error(`a racer exited (${code}) before it said what it won`)));
        }),
    );
    const won = await Promise.all(runs).finally(() => {
      for (const child of children) child.kill('SIGKILL');
    });
    expect(won.flat().sort()).toEqual([...names].sort());
  }, 30_000);
  it('judges a lease without a record (an older htorder lock) by its mtime, and sweeps dead tokens', async () => {
    const name = join(dir.path, 'old.lock');
    writeFileSync(name, '');
    expect(await store(2000).tryAcquire(name)).toBeUndefined();
    const old = new Date(Date.now() - 60_000);
    await lutimes(name, old, old);
    expect(await store(2000).tryAcquire(name)).toBeDefined();
    const dead = join(dir.path, '.htorder-lease.00dead');
    writeFileSync(dead, record(deadPid(), FAR));
    const alive = join(dir.path, '.htorder-lease.00a11ce');
    writeFileSync(alive, record(process.ppid, FAR));
    store().sweep(dir.path);
    expect(tokens().sort()).toEqual(expect.arrayContaining(['.htorder-lease.00a11ce']));
    expect(tokens()).not.toContain('.htorder-lease.00dead');
  });
});

describe('bucket leases', () => {
  const fx = s3Fixture();
  let n = 0;
  contract('a bucket', () => ({
    store: (leaseMs, rule, now) => new BucketLeases(fx.store, leaseMs, rule, now),
    name: () => `leases/${process.pid}-${n++}.claim`,
    read: async (key) => (await fx.store.get(key))?.body.toString('utf8'),
    plant: async (key, text) => {
      await fx.store.put(key, text);
    },
  }));

  it('renewals at once (the timer and a check before a move) never race: each succeeds, none reads as a takeover', async () => {
    const lease = (await new BucketLeases(fx.store, 30_000).tryAcquire(`leases/${process.pid}-together`))!;
    expect(await Promise.all([lease.renew(), lease.renew(), lease.renew()])).toEqual([true, true, true]);
    expect(lease.lost()).toBeUndefined();
    expect(await lease.renew()).toBe(true);
    await lease.release();
    expect(await fx.store.get(`leases/${process.pid}-together`)).toBeUndefined();
  });

  it('a lease not renewed within its time is lost, as far as its holder can tell without a request', async () => {
    const lease = (await new BucketLeases(fx.store, 300).tryAcquire(`leases/${process.pid}-late`))!;
    expect(lease.lost()).toBeUndefined();
    await sleep(350);
    expect(lease.lost()?.message).toMatch(/ran out/);
    expect(await lease.renew()).toBe(false);
  });
});
