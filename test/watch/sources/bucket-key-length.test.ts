import { PutObjectCommand } from '@aws-sdk/client-s3';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ReportTarget } from '../../../src/report/write-reports.js';
import { claimsRoot } from '../../../src/storage/bucket-lease.js';
import { longestDerivedKey, S3_MAX_KEY_BYTES } from '../../../src/watch/bucket-keys.js';
import { BucketSource } from '../../../src/watch/sources/bucket-source.js';
import { DEFAULT_LAYOUT } from '../../../src/watch/sources/model.js';
import { s3Fixture } from '../../support/s3.js';
import { tempDirPerTest } from '../../support/temp-files.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * S3 refuses a key over 1,024 bytes of UTF-8. A bucket watcher derives longer keys than the one
 * dropped (processing/, done/ and failed/ under a timestamped name, the reports beside them, the
 * claim under the state prefix): a drop whose derived keys cannot all be written is refused
 * before it is claimed, left where it was dropped, and told once.
 */
describe('a bucket: dropped keys whose derived keys S3 would refuse', () => {
  const fx = s3Fixture();
  let dir: string;
  beforeEach(async () => {
    dir = await tempDirPerTest('htorder-key-length-');
  });
  const put = (key: string, body: string) =>
    fx.s3.client.send(new PutObjectCommand({ Bucket: fx.s3.bucket, Key: key, Body: body }));
  const source = (prefix: string, state: string, onRefused?: (name: string, why: string) => void) =>
    new BucketSource({
      store: fx.store,
      prefix,
      state: { store: fx.store, prefix: state },
      leaseMs: 60_000,
      workDir: join(dir, 'work'),
      ...(onRefused ? { onRefused } : {}),
    });

  it('the test server refuses a key over 1,024 bytes as S3 does (400 KeyTooLongError)', async () => {
    const fits = `${'k'.repeat(200)}/`.repeat(5) + 'k'.repeat(S3_MAX_KEY_BYTES - 1005);
    expect(bytes(fits)).toBe(S3_MAX_KEY_BYTES);
    await expect(put(fits, 'x')).resolves.toBeDefined();
    const refused = put(`${fits}é`, 'x');
    await expect(refused).rejects.toMatchObject({ name: 'KeyTooLongError', $metadata: { httpStatusCode: 400 } });
  });

  it('is not claimed, stays at the top and is told once, naming the key, its bytes and the limit', async () => {
    // 804 bytes of prefix and a 205-byte name: its key (1,009 bytes) and processing/ copy fit, its claim does not.
    const prefix = `${'p'.repeat(200)}/`.repeat(4);
    const long = `${'é'.repeat(100)}.yaml`;
    await put(`${prefix}${long}`, 'version: 1\njobs: []\n');
    await put(`${prefix}ok.yaml`, 'version: 1\njobs: []\n');
    const told: [string, string][] = [];
    const src = source(prefix, 'kl-state/', (name, why) => told.push([name, why]));
    await src.init();
    try {
      expect((await src.list()).map((i) => i.name)).toEqual(['ok.yaml']);
      expect((await src.list()).map((i) => i.name)).toEqual(['ok.yaml']);
      expect(told).toHaveLength(1);
      const [name, why] = told[0]!;
      expect(name).toBe(long);
      // The longest: failed/ under a timestamped name, its result.json (the claim, 1,044 bytes, is over too).
      const report = `${prefix}failed/${long.slice(0, -5)}.19700101T000000000Z-999.yaml.result.json`;
      expect(why).toContain(`${bytes(report)} bytes`);
      expect(why).toContain(report.slice(-60));
      expect(why).toContain('1024 bytes');
      expect(why).toMatch(/shorten/i);
      expect((await fx.store.list(prefix)).map((o) => o.key)).toContain(`${prefix}${long}`);
      expect(await fx.store.list('kl-state/claims/')).toEqual([]);
    } finally {
      await src.close();
    }
  });

  it('computes no key shorter than the keys a finish really writes (a name dropped twice, all reports)', async () => {
    const prefix = 'kl-real/';
    const state = 'kl-real-state/';
    const name = `${'ü'.repeat(20)}.yaml`;
    const reports = async (target: ReportTarget) => {
      for (const path of Object.values(target.paths)) await writeFile(path, 'x\n');
      return target.paths;
    };
    const src = source(prefix, state);
    await src.init();
    const from = fx.s3.requests.length;
    try {
      for (let n = 0; n < 2; n++) {
        await put(`${prefix}${name}`, `version: 1\njobs: []\n# drop ${n}\n`);
        const claimed = await src.claim(name);
        await claimed!.finish('failed', reports);
      }
    } finally {
      await src.close();
    }
    const written = fx.s3.requests
      .slice(from)
      .filter((r) => r.method === 'PUT')
      .map((r) => decodeURIComponent(r.path).slice(`/${fx.s3.bucket}/`.length))
      .filter((k) => k.includes('ü'));
    const longest = longestDerivedKey(prefix, DEFAULT_LAYOUT, name, claimsRoot(state, fx.s3.bucket, prefix));
    expect(written.some((k) => k.endsWith('.claim'))).toBe(true);
    expect(Math.max(...written.map(bytes))).toBeLessThanOrEqual(bytes(longest));
    // It is one of the real keys, its stamp widened to the 999th clash of its name.
    const widened = written.map((k) => k.replace(/\.\d{8}T\d{9}Z\./, '.19700101T000000000Z-999.'));
    expect(widened).toContain(longest);
  });
});
