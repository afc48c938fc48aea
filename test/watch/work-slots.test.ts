import { PutObjectCommand } from '@aws-sdk/client-s3';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/log/logger.js';
import { BucketSource } from '../../src/watch/sources/bucket-source.js';
import { FolderSource } from '../../src/watch/sources/folder-source.js';
import { Watcher } from '../../src/watch/watcher.js';
import { HOST } from '../../src/storage/lease.js';
import { startTestS3, type TestS3, storeOf } from '../support/s3.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * The private copies of claimed inputs are made in slots that keep their folder and their
 * file (work-folder.ts): no inode is made or freed per input, and no customer's bytes are kept
 * once an input is done with. Work folders of killed watchers are swept at the next start.
 */
let dir: string; // removed after each test by tempDirPerTest
beforeEach(async () => {
  dir = await tempDirPerTest('htorder-work-slots-');
});

const workDir = (): string => join(dir, 'state', 'work');
const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

describe('a folder source', () => {
  const folderSource = async (): Promise<FolderSource> => {
    const s = new FolderSource(join(dir, 'drop'), { leaseMs: 60_000, workDir: workDir() });
    await mkdir(join(dir, 'drop'), { recursive: true });
    await s.init();
    return s;
  };

  it('copies inputs in turn into the same kept file of one slot, emptied between them', async () => {
    const s = await folderSource();
    try {
      const seen: { path: string; ino: number }[] = [];
      for (const [name, body] of [
        ['a.yaml', 'first input, longer'],
        ['b.yaml', 'second'],
      ]) {
        await writeFile(join(dir, 'drop', name!), body!);
        const c = (await s.claim(name!))!;
        expect(await readFile(c.path, 'utf8')).toBe(body);
        expect((await stat(c.path)).mode & 0o777).toBe(0o600);
        seen.push({ path: c.path, ino: (await stat(c.path)).ino });
        await c.finish('done');
        await expect(stat(c.path)).rejects.toThrow(); // its name went with it
      }
      expect(seen[1]!.ino).toBe(seen[0]!.ino);
      expect(join(seen[1]!.path, '..')).toBe(join(seen[0]!.path, '..'));
      // Between inputs the slot holds one empty file under a hidden name.
      const slot = join(seen[0]!.path, '..');
      expect(await readdir(slot)).toEqual(['.copy']);
      expect((await stat(join(slot, '.copy'))).size).toBe(0);
    } finally {
      await s.close();
    }
  });

  it('drops the copy of an input whose claim was lost, while the watcher runs', async () => {
    const s = await folderSource();
    let copy = '';
    let handled!: () => void;
    const wasHandled = new Promise<void>((resolve) => {
      handled = resolve;
    });
    const watcher = new Watcher({
      source: s,
      logger: createLogger({ level: 'silent' }),
      scanIntervalMs: 20,
      stableMs: 0,
      handle: async (input) => {
        copy = input.path;
        expect(await readFile(copy, 'utf8')).toBe('x');
        // Another instance took it over meanwhile (its claim in place of ours).
        await rm(join(dir, 'drop', 'processing', '.l.yaml.claim'));
        await writeFile(
          join(dir, 'drop', 'processing', '.l.yaml.claim'),
          JSON.stringify({ owner: 'other', host: HOST, pid: process.ppid, until: '2999-01-01T00:00:00.000Z' }),
        );
        handled();
        return 'lost';
      },
    });
    try {
      await writeFile(join(dir, 'drop', 'l.yaml'), 'x');
      await wasHandled;
      for (let i = 0; i < 200; i++) {
        if (
          !(await stat(copy).then(
            () => true,
            () => false,
          ))
        )
          break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await expect(stat(copy)).rejects.toThrow();
      // Its input and the taker's claim are untouched.
      expect((await readdir(join(dir, 'drop', 'processing'))).filter((n) => !n.startsWith('.htorder-lease.'))).toEqual([
        '.l.yaml.claim',
        'l.yaml',
      ]);
    } finally {
      await watcher.stop();
      await s.close();
    }
  });

  it('removes the work folders of killed watchers of this host at start, and only those', async () => {
    await mkdir(workDir(), { recursive: true });
    const dead = join(workDir(), `htorder-watch-${encodeURIComponent(HOST)}~${deadPid()}~0a1b2c3d~Xy12Ab`);
    const live = join(workDir(), `htorder-watch-${encodeURIComponent(HOST)}~${process.ppid}~0a1b2c3d~Xy12Ab`);
    const elsewhere = join(workDir(), `htorder-watch-other-host~${deadPid()}~0a1b2c3d~Xy12Ab`);
    const older = join(workDir(), 'htorder-watch-Xy12Ab'); // made by a version without the owner in the name
    for (const d of [dead, live, elsewhere, older]) {
      await mkdir(join(d, 'in-0'), { recursive: true });
      await writeFile(join(d, 'in-0', 'orders.yaml'), 'a customer order');
    }
    const s = await folderSource();
    try {
      await expect(stat(dead)).rejects.toThrow();
      for (const d of [live, elsewhere, older]) expect((await stat(d)).isDirectory()).toBe(true);
      // Its own folder says who made it.
      const own = (await readdir(workDir())).filter((n) => n.includes(`~${process.pid}~`));
      expect(own).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});

describe('a bucket source', () => {
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startTestS3({ conditional: true });
  });
  afterAll(async () => {
    await s3.close();
  });

  it('copies objects in turn into one kept slot: the same folder and file, no folder per object', async () => {
    const store = storeOf(s3);
    const source = new BucketSource({
      store,
      prefix: 'slots/',
      state: { store, prefix: 'slots-state/' },
      leaseMs: 60_000,
      workDir: workDir(),
    });
    await source.init();
    try {
      const seen: { path: string; ino: number }[] = [];
      for (const name of ['a.yaml', 'b.yaml']) {
        await s3.client.send(
          new PutObjectCommand({ Bucket: s3.bucket, Key: `slots/${name}`, Body: `body of ${name}` }),
        );
        const c = (await source.claim(name))!;
        expect(await readFile(c.path, 'utf8')).toBe(`body of ${name}`);
        seen.push({ path: c.path, ino: (await stat(c.path)).ino });
        await c.finish('done', async (to) => {
          await writeFile(to.paths.json, '{}');
          return { json: to.paths.json };
        });
      }
      expect(seen[1]!.ino).toBe(seen[0]!.ino);
      const slot = join(seen[0]!.path, '..');
      expect(join(seen[1]!.path, '..')).toBe(slot);
      // The local reports went with the copy; one empty kept file remains.
      expect(await readdir(slot)).toEqual(['.copy']);
      expect((await stat(join(slot, '.copy'))).size).toBe(0);
      expect(await readdir(join(slot, '..'))).toEqual(['in-0']);
    } finally {
      await source.close();
    }
  });
});
