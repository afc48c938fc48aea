import { spawn, spawnSync } from 'node:child_process';
import {
  linkSync,
  lstatSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { lutimes } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BucketLeases } from '../../src/storage/bucket-lease.js';
import { FolderLeases, isLeaseToken } from '../../src/storage/folder-lease.js';
import { HOST } from '../../src/storage/lease.js';
import { DIST, requireDist } from '../support/dist.js';
import { s3Fixture } from '../support/s3.js';
import { tempDir } from '../support/temp-files.js';

/**
 * What only one lease implementation does: a folder's token and links, a bucket's renewals.
 * The contract every implementation passes is test/storage/lease-contract.test.ts.
 */

const record = (pid: number, until: string): string =>
  `${JSON.stringify({ owner: 'someone-else', host: HOST, pid, until })}\n`;
const FAR = '2999-01-01T00:00:00.000Z';
const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

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
    // Each racer says when it has raced for every name, and once all have, what it still holds;
    // then it holds on until killed: none releases while others race.
    const racer = `
      import { FolderLeases } from ${JSON.stringify(join(DIST, 'storage/folder-lease.js'))};
      const leases = new FolderLeases({ owner: 'racer-' + process.pid, leaseMs: 30000 });
      while (Date.now() < ${start}) {}
      const won = [];
      for (const name of ${JSON.stringify(names)}) {
        const lease = await leases.tryAcquire(name);
        if (lease) won.push({ name, lease });
      }
      process.stdout.write('raced\\n');
      // A lease put back by a contender that moved it aside by mistake may be lost meanwhile,
      // until the last contender is through: its holder knows, and holds only what it still holds.
      process.stdin.once('data', () => {
        process.stdout.write(JSON.stringify(won.filter((w) => !w.lease.lost()).map((w) => w.name)) + '\\n');
      });
      setInterval(() => {}, 1000);`;
    const children = Array.from({ length: 4 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', racer], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    /** A racer's two answers: that it has raced for every name, then what it still holds once all have. */
    const answers = (child: (typeof children)[number]) => {
      let out = '';
      const settle: { raced?: () => void; held?: (names: string[]) => void } = {};
      const raced = new Promise<void>((resolve) => (settle.raced = resolve));
      const held = new Promise<string[]>((resolve) => (settle.held = resolve));
      child.stdout?.on('data', (d) => {
        out += d;
        if (out.startsWith('raced\n')) settle.raced?.();
        const rest = out.slice('raced\n'.length);
        if (rest.endsWith('\n')) settle.held?.(JSON.parse(rest) as string[]);
      });
      const exited = new Promise<never>((_, reject) =>
        child.on('exit', (code) => reject(new Error(`a racer exited (${code}) before it said what it won`))),
      );
      const both = { raced: Promise.race([raced, exited]), held: Promise.race([held, exited]) };
      both.held.catch(() => undefined); // observed once every racer is through
      return both;
    };
    const racers = children.map(answers);
    const won = await (async () => {
      await Promise.all(racers.map((r) => r.raced));
      for (const child of children) child.stdin?.write('report\n');
      return Promise.all(racers.map((r) => r.held));
    })().finally(() => {
      for (const child of children) child.kill('SIGKILL');
    });
    expect(won.flat().sort()).toEqual([...names].sort());
  }, 30_000);

  it('a renewal that finds its lease moved aside waits for it to be put back, and holds it still', async () => {
    const name = join(dir.path, 'claim.lock');
    const lease = (await store().tryAcquire(name))!;
    // What a contender's moveAside does to a lease it judged expired from a read taken before a renewal.
    const aside = `${name}.0badc0de.stale`;
    renameSync(name, aside);
    setTimeout(() => {
      linkSync(aside, name);
      unlinkSync(aside);
    }, 40);
    expect(await lease.renew()).toBe(true);
    expect(lease.lost()).toBeUndefined();
    // Removed for good: the renewal waits its 200 ms for a put-back that never comes, then the lease is lost.
    unlinkSync(name);
    expect(await lease.renew()).toBe(false);
    expect(lease.lost()?.message).toMatch(/was removed/);
  });

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
