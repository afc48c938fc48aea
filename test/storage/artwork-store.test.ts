import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync, realpathSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it, vi } from 'vitest';
import { ArtworkStore, type ArtworkStoreOptions } from '../../src/storage/artwork-store.js';
import { pinFolder } from '../../src/storage/folder-file.js';
import { startTestS3 } from '../support/s3.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * An artwork file is read and hashed once per identity (device, inode, size, times) for as
 * long as the store lives, however many lines name it and however they spell it, and the
 * hashing is streamed: other work runs while a large file is read.
 */

const store = (over: Partial<ArtworkStoreOptions> = {}) =>
  new ArtworkStore({
    bucket: 'b',
    prefix: 'art/',
    endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
    ...over,
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

/** Over the SDK's threshold for `Expect: 100-continue` (2 MiB): the body waits for the store's go-ahead. */
const BIG = 3 * 1024 * 1024 + 17;

/** This process's descriptors open on `path`. */
const descriptorsOn = (path: string): number =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false; // the listing's own descriptor, closed by now
    }
  }).length;

/** Polls until no descriptor is open on `path` (a stream closes its file asynchronously); the count left otherwise. */
async function descriptorsLeftOn(path: string): Promise<number> {
  const deadline = Date.now() + 5_000;
  while (descriptorsOn(path) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return descriptorsOn(path);
}

/**
 * A store that has no object (HEAD: 404) and answers every PUT with `status` before its body
 * is sent, as S3 does to an `Expect: 100-continue` it refuses (no permission, an object there).
 */
async function refusingStore(status: 403 | 412): Promise<{ url: string; close(): Promise<void> }> {
  const code = status === 403 ? 'AccessDenied' : 'PreconditionFailed';
  const server = createServer((req, res) => {
    res.writeHead(req.method === 'HEAD' ? 404 : status, { connection: 'close' }).end();
  });
  server.on('checkContinue', (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/xml', connection: 'close' });
    res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>refused</Message></Error>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('ArtworkStore.upload', () => {
  it('sends a file that waits for the store to continue whole: the object holds the bytes its key hashes', async () => {
    const s3 = await startTestS3({ conditional: true });
    const folder = await tempDirPerTest('htorder-artstore-upload-');
    writeFileSync(join(folder, 'big.png'), randomBytes(BIG));
    const s = store({ endpoint: s3.endpoint, bucket: s3.bucket, credentials: s3.credentials });
    try {
      const pin = pinFolder(folder);
      const file = await s.describe(pin, 'big.png');
      expect(await s.upload(pin, file)).toBe(true);
      const got = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: file.key }));
      const stored = Buffer.from(await got.Body!.transformToByteArray());
      expect(stored.length).toBe(BIG);
      expect(createHash('sha256').update(stored).digest('hex')).toBe(file.sha256);
      expect(s.uploads).toBe(1);
      expect(await s.upload(pin, file)).toBe(false);
      expect(s.uploads).toBe(1);
      expect(await descriptorsLeftOn(realpathSync(join(folder, 'big.png')))).toBe(0);
    } finally {
      s.close();
      await s3.close();
    }
  });

  it.each([403, 412] as const)('closes the file when the store answers %i before reading it', async (status) => {
    const refusing = await refusingStore(status);
    const folder = await tempDirPerTest('htorder-artstore-refused-');
    writeFileSync(join(folder, 'big.png'), randomBytes(BIG));
    const s = store({ endpoint: refusing.url });
    // The SDK's own warning of a failed streaming PUT would reach a daemon's stderr.
    const warned = vi.spyOn(console, 'warn');
    try {
      const pin = pinFolder(folder);
      const file = await s.describe(pin, 'big.png');
      const path = realpathSync(join(folder, 'big.png'));
      expect(descriptorsOn(path)).toBe(0);
      if (status === 403) await expect(s.upload(pin, file)).rejects.toMatchObject({ name: 'AccessDenied' });
      // An object at its key: another upload's, of the bytes its name hashes to, not this file changed.
      else expect(await s.upload(pin, file)).toBe(false);
      expect(s.uploads).toBe(0);
      expect(await descriptorsLeftOn(path)).toBe(0);
      expect(warned).not.toHaveBeenCalled();
    } finally {
      warned.mockRestore();
      s.close();
      await refusing.close();
    }
  });
});
