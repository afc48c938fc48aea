import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimsRoot } from '../../../src/storage/bucket-lease.js';
import { BucketSource } from '../../../src/watch/sources/bucket-source.js';
import { isLeaseToken } from '../../../src/storage/folder-lease.js';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';
import { ClaimLostError, type ClaimedInput } from '../../../src/watch/sources/model.js';
import { HOST, type LeaseStore } from '../../../src/storage/lease.js';
import { startTestS3, type TestS3, storeOf } from '../../support/s3.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * A holder whose claim was taken over (its lease ran out during a stall and another instance
 * took the input) must not move anything, and says so the same way for a folder and a bucket:
 * ClaimLostError, which the watcher reports as `lost` (not as the store being unavailable,
 * which would keep retrying an input that is no longer ours).
 */
const otherOwner = `${JSON.stringify({ owner: 'another-instance', host: HOST, pid: process.pid, until: '2999-01-01T00:00:00.000Z' })}\n`;

describe('finish after the claim was taken over', () => {
  let dir: string; // removed after each test by tempDirPerTest
  beforeEach(async () => {
    dir = await tempDirPerTest('htorder-claim-lost-');
  });

  /** `name` dropped into a folder source over the test's folder and claimed; the source closed after `use`. */
  async function withFolderClaim(name: string, use: (c: ClaimedInput) => Promise<void>): Promise<void> {
    const source = new FolderSource(dir, { leaseMs: 60_000, workDir: join(dir, '.work') });
    await source.init();
    try {
      await writeFile(join(dir, name), 'version: 1\n');
      await use((await source.claim(name))!);
    } finally {
      await source.close();
    }
  }

  it('a folder: ClaimLostError, no report written, the input left in processing/', async () => {
    await withFolderClaim('a.yaml', async (c) => {
      // As a takeover does: our claim name goes (moved aside), another instance's takes its place.
      await rm(join(dir, 'processing', '.a.yaml.claim'));
      await writeFile(join(dir, 'processing', '.a.yaml.claim'), otherOwner);
      let wrote = false;
      await expect(
        c.finish('done', async () => {
          wrote = true;
          return {};
        }),
      ).rejects.toBeInstanceOf(ClaimLostError);
      expect(wrote).toBe(false);
      expect(await readdir(join(dir, 'done'))).toEqual([]);
      expect((await readdir(join(dir, 'processing'))).filter((n) => !isLeaseToken(n)).sort()).toEqual([
        '.a.yaml.claim',
        'a.yaml',
      ]);
    });
  });

  it('a folder: reports half written when a write fails are removed, and the input stays', async () => {
    await withFolderClaim('b.yaml', async (c) => {
      await expect(
        c.finish('done', async (to) => {
          await writeFile(to.paths.csv, 'half');
          throw new Error('disk full');
        }),
      ).rejects.toThrow('disk full');
      expect(await readdir(join(dir, 'done'))).toEqual([]);
      expect(await readdir(join(dir, 'processing'))).toContain('b.yaml');
    });
  });

  describe('a bucket', () => {
    let s3: TestS3;
    beforeAll(async () => {
      s3 = await startTestS3({ conditional: true });
    });
    afterAll(async () => {
      await s3.close();
    });

    it('ClaimLostError, no report written, the input left in processing/', async () => {
      const prefix = 'lost/';
      const store = storeOf(s3);
      const state = { store, prefix: 'lost-state/' };
      const source = new BucketSource({ store, prefix, state, leaseMs: 60_000 });
      await source.init();
      try {
        await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${prefix}a.yaml`, Body: 'version: 1\n' }));
        const c = (await source.claim('a.yaml'))!;
        await s3.client.send(
          new PutObjectCommand({
            Bucket: s3.bucket,
            Key: `${claimsRoot(state.prefix, s3.bucket, prefix)}a.yaml.claim`,
            Body: otherOwner,
          }),
        );
        let wrote = false;
        await expect(
          c.finish('done', async () => {
            wrote = true;
            return {};
          }),
        ).rejects.toBeInstanceOf(ClaimLostError);
        expect(wrote).toBe(false);
        const res = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
        const keys = (res.Contents ?? []).map((o) => o.Key!.slice(prefix.length)).filter((k) => !k.startsWith('.'));
        expect(keys.sort()).toEqual(['processing/a.yaml']);
      } finally {
        await source.close();
      }
    });
  });
});

describe('a renewal answered after the claim was let go', () => {
  let dir: string; // removed after each test by tempDirPerTest
  beforeEach(async () => {
    dir = await tempDirPerTest('htorder-claim-let-go-');
  });

  it('is no takeover: the input finished here is not reported lost', async () => {
    // Leases as a database keeps them: a renewal answered after the release finds no row.
    let released = false;
    let delayed = false;
    let answer: (() => void) | undefined;
    const leases: LeaseStore = {
      leaseMs: 60_000,
      tryAcquire: async () => ({
        lost: () => undefined,
        renew: () =>
          delayed
            ? new Promise<boolean>((resolve) => {
                answer = () => resolve(!released);
              })
            : Promise.resolve(!released),
        release: async () => {
          released = true;
        },
      }),
    };
    const source = new FolderSource(dir, { leaseMs: 60_000, workDir: join(dir, '.work'), leases });
    await source.init();
    try {
      await writeFile(join(dir, 'a.yaml'), 'version: 1\n');
      const c = (await source.claim('a.yaml'))!;
      // The watcher's periodic renewal goes out, and is answered only once the input finished.
      delayed = true;
      const renewal = c.renew();
      delayed = false;
      await c.finish('done', async () => ({}));
      expect(released).toBe(true);
      answer!();
      expect(await renewal).toBe(true);
    } finally {
      await source.close();
    }
  });
});
