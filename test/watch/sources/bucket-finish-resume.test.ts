import { CopyObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ReportTarget } from '../../../src/report/write-reports.js';
import { BucketSource } from '../../../src/watch/sources/bucket-source.js';
import { s3Fixture } from '../../support/s3.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * A bucket's finish is several uploads seconds apart (reports, the input's copy, the delete in
 * processing/): a watcher killed among them leaves some of the input's final keys behind. The
 * instance that resumes the input must finish it under its own name, over what the cut-short
 * finish left (found by `npm run test:chaos`: the resumed input took a timestamped name, so it
 * looked finished twice) — and never over an older input of the same name.
 */
describe('a bucket input resumed after a finish cut short', () => {
  const fx = s3Fixture();
  let dir: string;
  beforeEach(async () => {
    dir = await tempDirPerTest('htorder-bucket-resume-');
  });

  const put = (key: string, body: string) =>
    fx.s3.client.send(new PutObjectCommand({ Bucket: fx.s3.bucket, Key: key, Body: body }));
  const text = async (key: string) =>
    (await (
      await fx.s3.client.send(new GetObjectCommand({ Bucket: fx.s3.bucket, Key: key }))
    ).Body?.transformToString()) ?? '';
  const keysUnder = async (prefix: string) =>
    ((await fx.s3.client.send(new ListObjectsV2Command({ Bucket: fx.s3.bucket, Prefix: prefix }))).Contents ?? [])
      .map((o) => o.Key!.slice(prefix.length))
      .sort();
  const source = (prefix: string) =>
    new BucketSource({
      store: fx.store,
      prefix,
      state: { store: fx.store, prefix: `state-${prefix}` },
      leaseMs: 60_000,
      workDir: join(dir, 'work'),
    });
  /** Writes result.json and result.csv (no errors.txt) as the pipeline would. */
  const reports = (tag: string) => async (target: ReportTarget) => {
    await writeFile(target.paths.json, `{"run":"${tag}"}\n`);
    await writeFile(target.paths.csv, `run\n${tag}\n`);
    return { json: target.paths.json, csv: target.paths.csv };
  };

  /** `name` dropped under `prefix`, claimed by one instance and given up (as by a crash) after `cut`; then resumed by another and finished. */
  async function resumeAfter(prefix: string, name: string, cut: (processingKey: string) => Promise<void>) {
    await put(`${prefix}${name}`, 'version: 1\njobs: []\n');
    const first = source(prefix);
    await first.init();
    const claimed = (await first.claim(name))!;
    await cut(`${prefix}processing/${name}`);
    await claimed.release();
    await first.close();
    const second = source(prefix);
    await second.init();
    try {
      const [orphan] = (await second.claimOrphans()).filter((c) => c.name === name);
      return await orphan!.finish('done', reports('resumed'));
    } finally {
      await second.close();
    }
  }

  it('takes its own name over the reports and the copy the cut-short finish left, and drops its stale errors.txt', async () => {
    const prefix = 'cut-late/';
    const final = await resumeAfter(prefix, 'a.yaml', async (processingKey) => {
      await put(`${prefix}done/a.yaml.result.json`, '{"run":"cut"}\n');
      await put(`${prefix}done/a.yaml.errors.txt`, 'from the cut-short finish\n');
      await fx.s3.client.send(
        new CopyObjectCommand({
          Bucket: fx.s3.bucket,
          CopySource: `${fx.s3.bucket}/${processingKey}`,
          Key: `${prefix}done/a.yaml`,
        }),
      );
    });
    expect(final).toBe(`s3://${fx.s3.bucket}/${prefix}done/a.yaml`);
    expect((await keysUnder(`${prefix}done/`)).filter((k) => !k.startsWith('.'))).toEqual([
      'a.yaml',
      'a.yaml.result.csv',
      'a.yaml.result.json',
    ]);
    expect(await text(`${prefix}done/a.yaml.result.json`)).toBe('{"run":"resumed"}\n');
    expect((await keysUnder(`${prefix}processing/`)).filter((k) => !k.startsWith('.'))).toEqual([]);
  });

  it('takes its own name when only some reports were uploaded', async () => {
    const prefix = 'cut-early/';
    const final = await resumeAfter(prefix, 'b.yaml', async () => {
      await put(`${prefix}done/b.yaml.result.json`, '{"run":"cut"}\n');
    });
    expect(final).toBe(`s3://${fx.s3.bucket}/${prefix}done/b.yaml`);
    expect(await text(`${prefix}done/b.yaml.result.json`)).toBe('{"run":"resumed"}\n');
  });

  it('never over an older input of the same name, nor over another input copied there since', async () => {
    const prefix = 'older/';
    await put(`${prefix}done/c.yaml`, 'an older drop\n');
    await put(`${prefix}done/c.yaml.result.json`, '{"run":"older"}\n');
    // The store's times have whole seconds: the older finish is a second older than the claim.
    await sleep(1100);
    const final = await resumeAfter(prefix, 'c.yaml', async () => undefined);
    expect(final).toMatch(new RegExp(`^s3://${fx.s3.bucket}/${prefix}done/c\\.\\d{8}T.*\\.yaml$`));
    expect(await text(`${prefix}done/c.yaml`)).toBe('an older drop\n');
    expect(await text(`${prefix}done/c.yaml.result.json`)).toBe('{"run":"older"}\n');

    const other = 'other/';
    const otherFinal = await resumeAfter(other, 'd.yaml', async () => {
      // Newer than the claim, but not this input: another upload copied to done/ meanwhile.
      await put(`${other}done/d.yaml`, 'something else\n');
    });
    expect(otherFinal).toMatch(new RegExp(`^s3://${fx.s3.bucket}/${other}done/d\\.\\d{8}T.*\\.yaml$`));
    expect(await text(`${other}done/d.yaml`)).toBe('something else\n');
  });
  it("resumes a finish cut short under a timestamped name (an older input's beside it) there: the input ends in done/ once", async () => {
    const prefix = 'night2/';
    await put(`${prefix}done/e.yaml`, 'last night\n');
    await put(`${prefix}done/e.yaml.result.json`, '{"run":"last night"}\n');
    await sleep(1100);
    const stamped = 'e.20261202T010203004Z.yaml';
    // Killed mid-move: the reports and the input's copy are there, the input still in processing/.
    const final = await resumeAfter(prefix, 'e.yaml', async (processingKey) => {
      await put(`${prefix}done/${stamped}.result.json`, '{"run":"cut"}\n');
      await put(`${prefix}done/${stamped}.errors.txt`, 'from the cut-short finish\n');
      const copy = { Bucket: fx.s3.bucket, CopySource: `${fx.s3.bucket}/${processingKey}` };
      await fx.s3.client.send(new CopyObjectCommand({ ...copy, Key: `${prefix}done/${stamped}` }));
    });
    expect(final).toBe(`s3://${fx.s3.bucket}/${prefix}done/${stamped}`);
    expect(await keysUnder(`${prefix}done/`)).toEqual([
      'e.20261202T010203004Z.yaml',
      'e.20261202T010203004Z.yaml.result.csv',
      'e.20261202T010203004Z.yaml.result.json',
      'e.yaml',
      'e.yaml.result.json',
    ]);
    expect(await text(`${prefix}done/${stamped}.result.json`)).toBe('{"run":"resumed"}\n');
    expect(await text(`${prefix}done/e.yaml`)).toBe('last night\n');
    expect(await keysUnder(`${prefix}processing/`)).toEqual([]);
  });
});
