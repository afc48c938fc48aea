import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  link,
  mkdir,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join, sep } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isLeaseToken } from '../../../src/storage/folder-lease.js';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';
import { DropTakenError } from '../../../src/watch/sources/model.js';
import { HOST } from '../../../src/storage/lease.js';
import { tempDir } from '../../support/temp-files.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  dir = await tempDir('htorder-folder-source-');
});
/** Every instance a test made, closed after it: an instance keeps its lease token open until close(). */
const made: FolderSource[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((s) => s.close()));
  await dir.remove();
});

/** The names in `sub`, without the lease tokens of the instances (folder-lease.ts). */
const ls = async (sub = ''): Promise<string[]> =>
  (await readdir(join(dir.path, sub))).filter((n) => !isLeaseToken(n)).sort();
const source = async (): Promise<FolderSource> => {
  const s = new FolderSource(dir.path, { leaseMs: 60_000 });
  made.push(s);
  await s.init();
  return s;
};
/** How many of this process's open descriptors are on `folder` or inside it (Linux: /proc/self/fd). */
async function descriptorsIn(folder: string): Promise<number> {
  const root = await realpath(folder);
  const links = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return links.filter((l) => l === root || l.startsWith(root + sep)).length;
}
const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

describe('FolderSource', () => {
  it('lets exactly one of several racing instances claim a file', async () => {
    const sources = await Promise.all(Array.from({ length: 6 }, () => source()));
    await writeFile(join(dir.path, 'a.yaml'), 'x');
    const claims = await Promise.all(sources.map((s) => s.claim('a.yaml')));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await ls('processing')).toEqual(['.a.yaml.claim', 'a.yaml']);
    // A live claim is nobody's orphan.
    for (const s of sources) expect(await s.claimOrphans()).toEqual([]);
  });

  it('resumes a file whose claiming process is gone from this host, once', async () => {
    await mkdir(join(dir.path, 'processing'), { recursive: true });
    await writeFile(join(dir.path, 'processing', 'b.yaml'), 'x');
    const lease = { owner: 'crashed', host: HOST, pid: deadPid(), until: '2999-01-01T00:00:00.000Z' };
    await writeFile(join(dir.path, 'processing', '.b.yaml.claim'), JSON.stringify(lease));
    const [s1, s2] = await Promise.all([source(), source()]);
    const [o1, o2] = await Promise.all([s1.claimOrphans(), s2.claimOrphans()]);
    expect([...o1, ...o2].map((c) => c.name)).toEqual(['b.yaml']);
    const claim = JSON.parse(await readFile(join(dir.path, 'processing', '.b.yaml.claim'), 'utf8'));
    expect(claim.owner).not.toBe('crashed');
    expect(claim.pid).toBe(process.pid);
  });

  it('resuming a file after a crash removes the marker the crash left at the top, not a new drop’s', async () => {
    await mkdir(join(dir.path, 'processing'), { recursive: true });
    for (const n of ['m.csv', 'n.csv']) {
      await writeFile(join(dir.path, 'processing', n), 'x');
      await writeFile(join(dir.path, `${n}.done`), '');
    }
    // A new n.csv was dropped with its own marker meanwhile: that marker stays.
    await writeFile(join(dir.path, 'n.csv'), 'new');
    const s = await source();
    expect((await s.claimOrphans()).map((c) => c.name).sort()).toEqual(['m.csv', 'n.csv']);
    expect(await ls()).toEqual(['failed', 'held', 'n.csv', 'n.csv.done', 'processing', 'done'].sort());
  });

  it('finishes into done/ beside earlier files of the same name without overwriting them', async () => {
    const s = await source();
    for (const round of [1, 2]) {
      await writeFile(join(dir.path, 'c.csv'), `round ${round}`);
      const c = (await s.claim('c.csv'))!;
      let shownAs: string | undefined;
      const final = await c.finish('done', async (to) => {
        shownAs = to.inputShownAs;
        await writeFile(to.paths.json, `{"round":${round}}`);
        return { json: to.paths.json };
      });
      expect(shownAs).toBe(final);
      expect(await readFile(final, 'utf8')).toBe(`round ${round}`);
      expect(await readFile(`${final}.result.json`, 'utf8')).toBe(`{"round":${round}}`);
    }
    const done = await ls('done');
    expect(done).toHaveLength(4);
    expect(done).toContain('c.csv');
    expect(await ls('processing')).toEqual([]);
  });

  it('after a crash while the reports were being written, the resumed input still takes its own name in done/', async () => {
    const first = await source();
    await writeFile(join(dir.path, 'e.yaml'), 'version: 1\n');
    const c = (await first.claim('e.yaml'))!;
    let crash: (err: Error) => void = () => undefined;
    let staged = '';
    // The first holder writes one report and then "dies" (never goes on).
    const dying = c.finish('done', async (to) => {
      staged = to.paths.csv;
      await writeFile(to.paths.csv, 'half');
      return new Promise<never>((_, reject) => {
        crash = reject;
      });
    });
    dying.catch(() => undefined);
    while (staged === '' || !(await ls('done')).length) await new Promise((r) => setTimeout(r, 5));
    // Only a hidden temporary file is in done/ meanwhile.
    expect((await ls('done')).every((n) => n.startsWith('.'))).toBe(true);
    const lease = { owner: 'crashed', host: HOST, pid: deadPid(), until: '2999-01-01T00:00:00.000Z' };
    await writeFile(join(dir.path, 'processing', '.e.yaml.claim'), JSON.stringify(lease));
    const [resumed] = await (await source()).claimOrphans();
    const final = await resumed!.finish('done', async (to) => {
      await writeFile(to.paths.json, '{}');
      return { json: to.paths.json };
    });
    expect(final).toBe(join(dir.path, 'done', 'e.yaml'));
    expect((await ls('done')).filter((n) => !n.startsWith('.'))).toEqual(['e.yaml', 'e.yaml.result.json']);
    crash(new Error('killed'));
  });

  it('does not rename a newly dropped file over an earlier one of the same name still in processing/', async () => {
    const s = await source();
    await writeFile(join(dir.path, 'd.yaml'), 'first');
    const first = (await s.claim('d.yaml'))!;
    await first.release(); // e.g. shut down while waiting to retry: stays in processing/
    await writeFile(join(dir.path, 'd.yaml'), 'second');
    const again = (await s.claim('d.yaml'))!;
    expect(await readFile(again.path, 'utf8')).toBe('first');
    expect(await readFile(join(dir.path, 'd.yaml'), 'utf8')).toBe('second');
  });

  it('hands the pipeline a private 0600 copy read through the claimed handle, not the drop folder', async () => {
    const s = await source();
    await writeFile(join(dir.path, 'p.yaml'), 'payload');
    const c = (await s.claim('p.yaml'))!;
    expect(c.refused).toBeUndefined();
    expect(c.path.startsWith(dir.path)).toBe(false);
    expect(await readFile(c.path, 'utf8')).toBe('payload');
    expect((await stat(c.path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(c.path, '..'))).mode & 0o777).toBe(0o700);
    await c.finish('done');
    expect(await ls('done')).toEqual(['p.yaml']);
    await s.close();
  });

  it('refuses, unread, a link or a hard link found under the name after the claim', async () => {
    const outside = await tempDir('htorder-folder-source-outside-');
    try {
      const secret = join(outside.path, 'secret');
      await writeFile(secret, 'SECRET');
      const s = await source();
      // The scan saw a regular file; by the claim's rename it is a link (swapped in between).
      await writeFile(join(dir.path, 'l.yaml'), 'x');
      await symlink(secret, join(dir.path, 'l.tmp'));
      await rename(join(dir.path, 'l.tmp'), join(dir.path, 'l.yaml'));
      const l = (await s.claim('l.yaml'))!;
      expect(l.refused).toMatch(/symbolic link/);
      expect(await readFile(l.path, 'utf8').catch(() => 'no copy')).toBe('no copy');
      // A hard link to another file: two links, refused.
      await link(secret, join(dir.path, 'h.yaml'));
      const h = (await s.claim('h.yaml'))!;
      expect(h.refused).toMatch(/2 hard links/);
      expect(await readFile(h.path, 'utf8').catch(() => 'no copy')).toBe('no copy');
      await s.close();
    } finally {
      await outside.remove();
    }
  });

  it('refuses a file over the size cap', async () => {
    const s = new FolderSource(dir.path, { maxInputBytes: 10 });
    made.push(s);
    await s.init();
    await writeFile(join(dir.path, 'big.csv'), 'x'.repeat(11));
    expect((await s.claim('big.csv'))?.refused).toMatch(/11 bytes, over the 10-byte limit/);
    await s.close();
  });
  // A refused source is dropped by its caller without close(): a handle it kept would be closed
  // only by the garbage collector, which Node warns of (DEP0137) and will make an error.
  it.runIf(existsSync('/proc/self/fd'))(
    'holds nothing open in the drop folder once init() refused it (marked for another ledger, or a sub-folder that is a file)',
    async () => {
      const mark = (id: string) => ({ id: async () => id, where: `ledger ${id}`, replace: false });
      const first = new FolderSource(dir.path, { leaseMs: 60_000, ledger: mark('ledger-a') });
      await first.init();
      // The probe sees what a working source holds (its sub-folders).
      expect(await descriptorsIn(dir.path)).toBeGreaterThan(0);
      await first.close();
      expect(await descriptorsIn(dir.path)).toBe(0);

      const other = new FolderSource(dir.path, { leaseMs: 60_000, ledger: mark('ledger-b') });
      await expect(other.init()).rejects.toBeInstanceOf(DropTakenError);
      expect(await descriptorsIn(dir.path)).toBe(0);

      await rm(join(dir.path, 'held'), { recursive: true });
      await writeFile(join(dir.path, 'held'), 'not a folder');
      const odd = new FolderSource(dir.path, { leaseMs: 60_000 });
      await expect(odd.init()).rejects.toThrow(`the held folder ${join(dir.path, 'held')} is not a folder`);
      expect(await descriptorsIn(dir.path)).toBe(0);
    },
  );

  it('removes temporary files a killed instance left (old ones only, only its own names)', async () => {
    for (const k of ['processing', 'done', 'failed']) await mkdir(join(dir.path, k), { recursive: true });
    const old = new Date(Date.now() - 60 * 60_000);
    const planted = {
      // A claim renewal's temp file, staged reports, a stale claim moved aside: an hour old.
      processing: ['..a.yaml.claim.4242.0a1b2c3d.tmp', '.a.yaml.claim.89abcdef.stale'],
      done: ['.a.yaml.result.json.4242.deadbeef.tmp'],
      failed: ['.b.csv.errors.txt.77.0123abcd.tmp'],
    };
    for (const [k, names] of Object.entries(planted)) {
      for (const n of names) {
        await writeFile(join(dir.path, k, n), 'x');
        await utimes(join(dir.path, k, n), old, old);
      }
    }
    // Kept: the same kind of name written a moment ago (another instance may be writing it),
    // and old hidden files that are not htorder's temporaries.
    await writeFile(join(dir.path, 'done', '.c.yaml.result.csv.4242.feedface.tmp'), 'x');
    for (const n of ['.keep', '.notes.tmp', '.a.yaml.claim']) {
      await writeFile(join(dir.path, 'done', n), 'x');
      await utimes(join(dir.path, 'done', n), old, old);
    }
    const s = await source();
    expect(await ls('processing')).toEqual([]);
    expect(await ls('failed')).toEqual([]);
    expect(await ls('done')).toEqual(['.a.yaml.claim', '.c.yaml.result.csv.4242.feedface.tmp', '.keep', '.notes.tmp']);
    await s.close();
  });
});
