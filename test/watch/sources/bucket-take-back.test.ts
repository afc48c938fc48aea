import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { PRECONDITION_FAILED } from '../../../src/storage/s3/s3-store.js';
import { BucketSource } from '../../../src/watch/sources/bucket-source.js';
import { s3Fixture } from '../../support/s3.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * A held input taken back is created at the top with `If-None-Match: *`. A store may apply that
 * write and still fail its answer (an HTTP 500 on the way back): the SDK sends it again, and the
 * retry gets 412 from the object it made itself. That object is the input given back, not a
 * newer upload to give it back beside: one held input is given back once, processed once.
 */
describe('a bucket: a held input taken back whose write answered 412 to its own retry', () => {
  const fx = s3Fixture();

  it('is given back once, under its own name', async () => {
    const prefix = 'take-back/';
    const body = 'version: 1\njobs: []\n';
    const store = fx.store;
    const put = store.put.bind(store);
    let lost = 0;
    // As the SDK's retry of a write whose answer was lost: applied, then refused to the caller.
    store.put = async (key, data, condition, contentType, contentLength) => {
      const etag = await put(key, data, condition, contentType, contentLength);
      if (condition && 'ifNoneMatch' in condition && key === `${prefix}hv.yaml` && etag !== PRECONDITION_FAILED) {
        lost += 1;
        return put(key, data, condition);
      }
      return etag;
    };
    const source = new BucketSource({
      store,
      prefix,
      state: { store, prefix: 'take-back-state/' },
      leaseMs: 60_000,
      workDir: await tempDirPerTest('htorder-take-back-'),
    });
    await source.init();
    try {
      await fx.s3.client.send(new PutObjectCommand({ Bucket: fx.s3.bucket, Key: `${prefix}held/hv.yaml`, Body: body }));
      expect(await source.takeBack('hv.yaml')).toBe(`s3://${fx.s3.bucket}/${prefix}hv.yaml`);
      expect(lost).toBe(1);
      expect((await store.list(prefix)).map((o) => o.key)).toEqual([`${prefix}hv.yaml`]);
    } finally {
      store.put = put;
      await source.close();
    }
  });
});
