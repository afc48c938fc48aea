import { spawnSync } from 'node:child_process';
import { link, lstat, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isLeaseToken } from '../../../src/storage/folder-lease.js';
import { FolderSource, type FolderSourceOptions } from '../../../src/watch/sources/folder-source.js';
import { ClaimLostError } from '../../../src/watch/sources/model.js';
import { HOST, isExpired, parseLease } from '../../../src/storage/lease.js';
import { tempDir } from '../../support/temp-files.js';

/**
 * Claims are hard links to one lease token per instance (folder-lease.ts): no inode is made or
 * freed per claim. They must exclude each other exactly as the exclusive claim files did, also
 * against an htorder that only knows those (it reads the record and judges it by its lease),
 * in both directions.
 */
let dir: Awaited<ReturnType<typeof tempDir>>;
const opened: FolderSource[] = [];
beforeEach(async () => {
  dir = await tempDir('htorder-folder-claims-');
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  await dir.remove();
});

const processing = (name = ''): string => join(dir.path, 'processing', name);
const tokensIn = async (): Promise<string[]> => (await readdir(processing())).filter(isLeaseToken);
const source = async (opts: FolderSourceOptions = {}): Promise<FolderSource> => {
  const s = new FolderSource(dir.path, { leaseMs: 60_000, workDir: join(dir.path, '.work'), ...opts });
  await s.init();
  opened.push(s);
  return s;
};
const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

/** How htorder before claim tokens claimed: an exclusive create of the claim file holding its lease. */
async function oldClaim(name: string, lease: object): Promise<boolean> {
  try {
    const handle = await open(processing(`.${name}.claim`), 'wx');
    await handle.writeFile(`${JSON.stringify(lease)}\n`);
    await handle.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** How htorder before claim tokens took over a stale claim (its takeOverStale): judged by the record read. */
async function oldTakeOver(name: string, lease: object): Promise<boolean> {
  const path = processing(`.${name}.claim`);
  const text = await readFile(path, 'utf8');
  if (!isExpired(parseLease(text))) return false;
  const aside = `${path}.0badc0de.stale`;
  await rename(path, aside);
  if ((await readFile(aside, 'utf8')) !== text) {
    await rename(aside, path);
    return false;
  }
  await rm(aside);
  return oldClaim(name, lease);
}

const liveOther = { owner: 'old-htorder', host: HOST, pid: process.ppid, until: '2999-01-01T00:00:00.000Z' };

describe('claims linked to a lease token', () => {
  it('a claim is a hard link to its instance token, which holds the lease record; releasing frees no inode', async () => {
    const s = await source();
    await writeFile(join(dir.path, 'a.yaml'), 'x');
    const c = (await s.claim('a.yaml'))!;
    const [token] = await tokensIn();
    const claim = await lstat(processing('.a.yaml.claim'));
    const tok = await lstat(processing(token));
    expect(claim.ino).toBe(tok.ino);
    expect(tok.nlink).toBe(2);
    const lease = parseLease(await readFile(processing('.a.yaml.claim'), 'utf8'));
    expect(lease).toMatchObject({ host: HOST, pid: process.pid });
    expect(isExpired(lease)).toBe(false);
    await c.release();
    await expect(lstat(processing('.a.yaml.claim'))).rejects.toThrow();
    expect((await lstat(processing(token))).nlink).toBe(1);
    // Closing removes the token: nothing of this instance stays in processing/.
    await s.close();
    expect(await tokensIn()).toEqual([]);
  });

  it('of two instances racing for many files, each file is claimed once, by a link to its claimant token', async () => {
    const [s1, s2] = await Promise.all([source(), source()]);
    const names = Array.from({ length: 20 }, (_, i) => `r${i}.yaml`);
    for (const n of names) await writeFile(join(dir.path, n), n);
    const results = await Promise.all(names.flatMap((n) => [s1.claim(n), s2.claim(n)]));
    expect(
      results
        .filter(Boolean)
        .map((c) => c!.name)
        .sort(),
    ).toEqual([...names].sort());
    const tokens = await Promise.all((await tokensIn()).map((t) => lstat(processing(t))));
    expect(tokens).toHaveLength(2);
    for (const n of names) {
      const ino = (await lstat(processing(`.${n}.claim`))).ino;
      expect(tokens.map((t) => t.ino)).toContain(ino);
    }
    expect(tokens.reduce((sum, t) => sum + t.nlink, 0)).toBe(2 + names.length);
  });

  it('renewing rewrites the token in place: same inode, a later lease, no new file', async () => {
    const s = await source({ leaseMs: 600 });
    await writeFile(join(dir.path, 'n.yaml'), 'x');
    const c = (await s.claim('n.yaml'))!;
    const before = await lstat(processing('.n.yaml.claim'));
    const until = parseLease(await readFile(processing('.n.yaml.claim'), 'utf8'))!.until;
    const names = (await readdir(processing())).sort();
    await new Promise((r) => setTimeout(r, 150)); // past a sixth of the lease
    expect(await c.renew()).toBe(true);
    expect((await lstat(processing('.n.yaml.claim'))).ino).toBe(before.ino);
    expect(parseLease(await readFile(processing('.n.yaml.claim'), 'utf8'))!.until > until).toBe(true);
    expect((await readdir(processing())).sort()).toEqual(names);
  });

  it('an exclusive claim file of an older htorder, live, keeps this version out', async () => {
    const s = await source();
    await mkdir(processing(), { recursive: true });
    await writeFile(join(dir.path, 'o.yaml'), 'x');
    expect(await oldClaim('o.yaml', liveOther)).toBe(true);
    expect(await s.claim('o.yaml')).toBeUndefined();
    await writeFile(processing('p.yaml'), 'x');
    expect(await oldClaim('p.yaml', liveOther)).toBe(true);
    expect(await s.claimOrphans()).toEqual([]);
    // Its claims untouched.
    expect(parseLease(await readFile(processing('.p.yaml.claim'), 'utf8'))?.owner).toBe('old-htorder');
  });

  it('a linked claim keeps an older htorder out while live, and is taken over by it when stale', async () => {
    const s = await source({ leaseMs: 400 });
    await writeFile(join(dir.path, 'q.yaml'), 'x');
    const c = (await s.claim('q.yaml'))!;
    const oldLease = { ...liveOther, until: new Date(Date.now() + 60_000).toISOString() };
    expect(await oldClaim('q.yaml', oldLease)).toBe(false);
    expect(await oldTakeOver('q.yaml', oldLease)).toBe(false);
    // This instance stalls past its lease (nothing renews it): the old version takes the input over.
    await new Promise((r) => setTimeout(r, 450));
    expect(await oldTakeOver('q.yaml', oldLease)).toBe(true);
    expect(await c.renew()).toBe(false);
    await expect(c.finish('done')).rejects.toBeInstanceOf(ClaimLostError);
    expect(await readdir(join(dir.path, 'done'))).toEqual([]);
  });

  it("a dead instance's linked claim is taken over, and its token swept, by the next instance", async () => {
    // What an instance killed while holding an input leaves: its token and a claim linked to it.
    await mkdir(processing(), { recursive: true });
    await writeFile(processing('d.yaml'), 'x');
    const token = processing('.htorder-lease.00deadbeef000000');
    const dead = { owner: 'dead-instance', host: HOST, pid: deadPid(), until: '2999-01-01T00:00:00.000Z' };
    await writeFile(token, `${JSON.stringify(dead)}\n`);
    await link(token, processing('.d.yaml.claim'));
    const live = processing('.htorder-lease.00a11ce000000000');
    await writeFile(live, `${JSON.stringify(liveOther)}\n`);
    const s = await source();
    await expect(lstat(token)).rejects.toThrow(); // swept: its process is gone
    expect((await lstat(live)).isFile()).toBe(true); // a live one stays
    const [resumed] = await s.claimOrphans();
    expect(resumed?.name).toBe('d.yaml');
    const mine = (await tokensIn()).filter((t) => processing(t) !== live);
    expect(mine).toHaveLength(1);
    expect((await lstat(processing('.d.yaml.claim'))).ino).toBe((await lstat(processing(mine[0]!))).ino);
    expect(await resumed!.finish('done')).toBe(join(dir.path, 'done', 'd.yaml'));
  });

  it('a claim taken over by another instance of this version is seen as lost', async () => {
    const a = await source({ leaseMs: 300 });
    await writeFile(join(dir.path, 't.yaml'), 'x');
    const c = (await a.claim('t.yaml'))!;
    const b = await source();
    expect(await b.claimOrphans()).toEqual([]); // live
    await new Promise((r) => setTimeout(r, 350));
    const [taken] = await b.claimOrphans();
    expect(taken?.name).toBe('t.yaml');
    expect(await c.renew()).toBe(false);
    await expect(c.finish('done')).rejects.toBeInstanceOf(ClaimLostError);
    expect(await taken!.finish('done')).toBe(join(dir.path, 'done', 't.yaml'));
  });

  it('where hard links are refused, claims are files of their own that still exclude each other', async () => {
    const refuse = (): void => {
      throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' });
    };
    const s = await source({ linkFile: refuse, leaseMs: 600 });
    const other = await source();
    await writeFile(join(dir.path, 'f.yaml'), 'x');
    const c = (await s.claim('f.yaml'))!;
    expect(await other.claim('f.yaml')).toBeUndefined();
    const claim = await stat(processing('.f.yaml.claim'));
    expect(claim.nlink).toBe(1);
    expect(parseLease(await readFile(processing('.f.yaml.claim'), 'utf8'))?.pid).toBe(process.pid);
    expect(await c.renew()).toBe(true);
    expect(await c.finish('done')).toBe(join(dir.path, 'done', 'f.yaml'));
    await expect(lstat(processing('.f.yaml.claim'))).rejects.toThrow();
  });
});
