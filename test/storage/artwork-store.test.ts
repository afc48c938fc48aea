import { createHash } from 'node:crypto';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArtworkStore } from '../../src/storage/artwork-store.js';
import { pinFolder } from '../../src/storage/folder-file.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * An artwork file is read and hashed once per identity (device, inode, size, times) for as
 * long as the store lives, however many lines name it and however they spell it, and the
 * hashing is streamed: other work runs while a large file is read.
 */

const store = () =>
  new ArtworkStore({
    bucket: 'b',
    prefix: 'art/',
    endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
  });

describe('ArtworkStore.describe', () => {
  it('hashes a file once however many lines name it, and again once it changed', async () => {
    const folder = await tempDirPerTest('htorder-artstore-');
    writeFileSync(join(folder, 'tiger.png'), 'first');
    const s = store();
    try {
      const pin = pinFolder(folder);
      const names = Array.from({ length: 200 }, (_, i) => (i % 2 ? 'tiger.png' : './tiger.png'));
      const files = await Promise.all(names.map((n) => s.describe(pin, n)));
      const sha = createHash('sha256').update('first').digest('hex');
      expect(new Set(files.map((f) => f.sha256))).toEqual(new Set([sha]));
      expect(files[0]?.key).toBe(`art/${sha}.png`);
      expect(s.hashed).toBe(1);
      writeFileSync(join(folder, 'tiger.png'), 'second, longer');
      expect((await s.describe(pin, 'tiger.png')).sha256).toBe(
        createHash('sha256').update('second, longer').digest('hex'),
      );
      expect(s.hashed).toBe(2);
    } finally {
      s.close();
    }
  });

  it('streams a large file: the event loop turns while it is hashed', async () => {
    const folder = await tempDirPerTest('htorder-artstore-big-');
    const big = join(folder, 'big.png');
    writeFileSync(big, '');
    truncateSync(big, 64 * 1024 * 1024);
    const s = store();
    try {
      let turns = 0;
      let hashing = true;
      const tick = (): void => {
        turns++;
        if (hashing) setImmediate(tick);
      };
      setImmediate(tick);
      const file = await s.describe(pinFolder(folder), 'big.png');
      hashing = false;
      expect(file.size).toBe(64 * 1024 * 1024);
      expect(turns).toBeGreaterThan(8);
    } finally {
      s.close();
    }
  });

  it('refuses a file its input may not add (admit) before reading it', async () => {
    const folder = await tempDirPerTest('htorder-artstore-admit-');
    writeFileSync(join(folder, 'tiger.png'), 'x');
    const s = store();
    try {
      await expect(s.describe(pinFolder(folder), 'tiger.png', () => 'over the cap')).rejects.toThrow('over the cap');
      expect(s.hashed).toBe(0);
    } finally {
      s.close();
    }
  });
});
