import { PutObjectCommand } from '@aws-sdk/client-s3';
import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { claimsRoot } from '../../../src/storage/bucket-lease.js';
import { BucketSource } from '../../../src/watch/sources/bucket-source.js';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';
import type { ClaimedInput, DropSource } from '../../../src/watch/sources/model.js';
import { s3Fixture } from '../../support/s3.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * A claim taken is given back on every path: when making the input's private copy fails after
 * the claim was taken (here: the work folder's next slot cannot be made, a real file-system
 * error), the claim goes at once — and an orphan search that fails part-way gives back the
 * claims it took before the failure too. Otherwise each would sit unrenewed in processing/
 * until its lease ran out, held by nobody.
 */

interface Subject {
  /** A fresh instance on the same drop location, with its own work folder under `work`. */
  source(work: string): Promise<DropSource>;
  /** Puts `name` at the top (`processing`: straight into processing/, as a crashed instance leaves it). */
  drop(name: string, where?: 'top' | 'processing'): Promise<void>;
  /** Whether a claim on `name` exists in processing/. */
  claimed(name: string): Promise<boolean>;
}

/** Blocks slot `n` of the one work folder under `work`: a file where its folder is to be made. */
async function breakSlot(work: string, n: number): Promise<void> {
  const [folder] = (await readdir(work)).filter((f) => f.startsWith('htorder-watch-'));
  await writeFile(join(work, folder!, `in-${n}`), 'not a folder');
}

function givenBack(kind: string, setUp: () => Promise<Subject>): void {
  describe(`a claim given back: ${kind}`, () => {
    let subject: Subject;
    let dir: string;
    beforeEach(async () => {
      subject = await setUp();
      dir = await tempDirPerTest('htorder-given-back-');
    });

    it('when its private copy cannot be made, the claim goes and another instance takes the input at once', async () => {
      await subject.drop('a.yaml');
      const first = await subject.source(join(dir, 'w1'));
      await breakSlot(join(dir, 'w1'), 0);
      await expect(first.claim('a.yaml')).rejects.toThrow();
      expect(await subject.claimed('a.yaml')).toBe(false);
      const second = await subject.source(join(dir, 'w2'));
      const [resumed] = await second.claimOrphans();
      expect(resumed?.name).toBe('a.yaml');
      await resumed!.release();
      await first.close();
      await second.close();
    });

    it('an orphan search failing part-way gives back every claim it took, the ones before the failure too', async () => {
      for (const name of ['o1.yaml', 'o2.yaml', 'o3.yaml']) await subject.drop(name, 'processing');
      const first = await subject.source(join(dir, 'w1'));
      await breakSlot(join(dir, 'w1'), 1); // the second orphan's copy fails
      await expect(first.claimOrphans()).rejects.toThrow();
      for (const name of ['o1.yaml', 'o2.yaml', 'o3.yaml']) expect(await subject.claimed(name)).toBe(false);
      const second = await subject.source(join(dir, 'w2'));
      const resumed: ClaimedInput[] = await second.claimOrphans();
      expect(resumed.map((c) => c.name).sort()).toEqual(['o1.yaml', 'o2.yaml', 'o3.yaml']);
      for (const c of resumed) await c.release();
      await first.close();
      await second.close();
    });
  });
}

let n = 0;

givenBack('a folder', async () => {
  const drop = await tempDirPerTest('htorder-given-back-drop-');
  return {
    async source(work) {
      const s = new FolderSource(drop, { leaseMs: 60_000, workDir: work });
      await s.init();
      return s;
    },
    async drop(name, where = 'top') {
      await mkdir(join(drop, 'processing'), { recursive: true });
      await writeFile(join(drop, where === 'top' ? '' : 'processing', name), 'version: 1\njobs: []\n');
    },
    claimed: async (name) =>
      (await lstat(join(drop, 'processing', `.${name}.claim`)).catch(() => undefined)) !== undefined,
  };
});

describe('buckets', () => {
  const fx = s3Fixture();
  givenBack('a bucket', async () => {
    const prefix = `given-back-${n++}/`;
    return {
      async source(work) {
        const state = { store: fx.store, prefix: `state-${prefix}` };
        const s = new BucketSource({ store: fx.store, prefix, state, leaseMs: 60_000, workDir: work });
        await s.init();
        return s;
      },
      async drop(name, where = 'top') {
        const key = `${prefix}${where === 'top' ? '' : 'processing/'}${name}`;
        await fx.s3.client.send(
          new PutObjectCommand({ Bucket: fx.s3.bucket, Key: key, Body: 'version: 1\njobs: []\n' }),
        );
      },
      claimed: async (name) =>
        (await fx.store.get(`${claimsRoot(`state-${prefix}`, fx.s3.bucket, prefix)}${name}.claim`)) !== undefined,
    };
  });
});
