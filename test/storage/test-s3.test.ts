import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestS3, type TestS3 } from '../support/s3.js';

/**
 * The in-process S3 of the tests (test/support/s3.ts) is only as good as it is steady: s3rver
 * keeps objects as files in folders and removes a folder its last object leaves, so a PUT and
 * a DELETE of two keys under one prefix could race (the PUT's file opened in a folder just
 * removed: an uncaught ENOENT that failed whichever test was running). Real S3 has no
 * folders; the proxy in front takes writes one at a time.
 */
let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3.close();
});

describe('the tests’ S3', () => {
  it('takes PUTs and DELETEs of different keys under one prefix at once, as S3 does', async () => {
    const put = (key: string) => s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'x' }));
    const del = (key: string) => s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    // Each round empties the prefix (so s3rver removes its folder) while the next object is written to it.
    await put('p/.state/probe-0');
    for (let i = 1; i <= 150; i++) {
      const results = await Promise.allSettled([del(`p/.state/probe-${i - 1}`), put(`p/.state/probe-${i}`)]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    }
  }, 60_000);

  it('goes on serving an object after clients died reading it (a watcher killed mid-download)', async () => {
    // Big enough that the answer is still being piped when its reader goes.
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'big', Body: Buffer.alloc(4_000_000, 'x') }));
    const { port } = new URL(s3.endpoint);
    for (let i = 0; i < 10; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((r) => socket.on('connect', r));
      socket.write(`GET /${s3.bucket}/big HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      await new Promise((r) => setTimeout(r, i * 3));
      socket.destroy();
    }
    const read = s3.client
      .send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'big' }))
      .then(async (r) => (await r.Body!.transformToByteArray()).length);
    const stuck = new Promise((r) => setTimeout(() => r('stuck'), 10_000));
    expect(await Promise.race([read, stuck])).toBe(4_000_000);
  }, 30_000);
});
