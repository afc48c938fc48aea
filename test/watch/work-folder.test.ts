import { PutObjectCommand } from '@aws-sdk/client-s3';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BucketSource } from '../../src/watch/sources/bucket-source.js';
import { FolderSource } from '../../src/watch/sources/folder-source.js';
import { startTestS3, type TestS3, storeOf } from '../support/s3.js';
import { tempDir } from '../support/temp-files.js';

/**
 * Both sources keep the private copies of what they claimed in a 0700 folder of their own
 * inside the work folder they are given (`watch`: the state directory's work/), not in the
 * system's shared temporary folder, and remove it when closed.
 */
describe('private copies in the given work folder', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startTestS3({ conditional: true });
  });
  afterAll(async () => {
    await s3.close();
  });
  beforeEach(async () => {
    dir = await tempDir('htorder-work-folder-');
  });
  afterEach(async () => {
    await dir.remove();
  });

  const expectInside = async (path: string, workDir: string) => {
    expect(path.startsWith(`${workDir}/htorder-watch-`)).toBe(true);
    expect((await stat(workDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(path, '..', '..'))).mode & 0o777).toBe(0o700);
  };

  it('a bucket', async () => {
    const workDir = join(dir.path, 'state', 'work');
    const store = storeOf(s3);
    const source = new BucketSource({
      store,
      prefix: 'wf/',
      state: { store, prefix: 'wf-state/' },
      leaseMs: 60_000,
      workDir,
    });
    await source.init();
    try {
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'wf/a.yaml', Body: 'version: 1\n' }));
      const c = (await source.claim('a.yaml'))!;
      await expectInside(c.path, workDir);
    } finally {
      await source.close();
    }
  });

  it('a folder', async () => {
    const workDir = join(dir.path, 'state', 'work');
    await writeFile(join(dir.path, 'a.yaml'), 'version: 1\n');
    const source = new FolderSource(dir.path, { leaseMs: 60_000, workDir });
    await source.init();
    try {
      const c = (await source.claim('a.yaml'))!;
      await expectInside(c.path, workDir);
    } finally {
      await source.close();
    }
  });
});
