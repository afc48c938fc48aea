import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/index.js';
import type { InputEvent } from '../../../src/watch/events.js';
import { runWatch } from '../../../src/app/watch-daemon.js';
import { bucketStateOf } from '../../../src/app/bucket-ledger.js';
import { UsageError } from '../../../src/core/errors.js';
import { runApprove } from '../../../src/cli/approve-command.js';
import { startTestS3, type TestS3 } from '../../support/s3.js';
import { tempDir } from '../../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';
import { sink } from '../../support/sink.js';

let sandbox: Sandbox;
let apiEnv: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;
let s3: TestS3;
let env: Record<string, string>;

beforeAll(async () => {
  state = await tempDir('htorder-bucket-state-');
  ({ sandbox, env: apiEnv } = await sandboxWithEnv(state.path));
  s3 = await startTestS3({ conditional: true });
  env = { ...apiEnv, ...s3.env };
});
afterAll(async () => {
  await s3.close();
  await sandbox.close();
  await state.remove();
});

let prefix: string;
let n = 0;
beforeEach(async () => {
  await sandbox.admin.reset();
  prefix = `drop${++n}/`;
});

const put = (key: string, body: string) =>
  s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${prefix}${key}`, Body: body }));
const keys = async (under = ''): Promise<string[]> => {
  const res = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}${under}` }));
  return (res.Contents ?? []).map((o) => o.Key!.slice(prefix.length)).sort();
};
const text = async (key: string): Promise<string> =>
  (await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${prefix}${key}` }))).Body!.transformToString();
const jobsOf = async (): Promise<string[]> => (await sandbox.admin.jobs()).map((j) => j.orderNumber ?? '?').sort();
const target = (): string => `s3://${s3.bucket}/${prefix}`;
/** Each test's watcher ledger and claims: a prefix beside the drop prefix, never under it. */
const stateUrl = (): string => `s3://${s3.bucket}/state-${prefix}`;
const stateKeys = async (under = ''): Promise<string[]> => {
  const at = `state-${prefix}`;
  const res = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${at}${under}` }));
  return (res.Contents ?? []).map((o) => o.Key!.slice(at.length)).sort();
};
const claimKey = (name: string): string => `state-${prefix}claims/${s3.bucket}/${prefix}${name}.claim`;
/** One watch that is expected to stop at start: its exit code and what it said (a UsageError's message, as the command line prints it, with exit 2). */
const watchOnce = async (
  flags: Record<string, unknown>,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; err: string }> => {
  const stderr = sink();
  const code = await runWatch(
    { target: target(), flags, logLevel: 'silent' },
    { stderr: stderr.stream, env: { ...env, ...extraEnv }, cwd: process.cwd(), signal: new AbortController().signal },
  ).catch((e: unknown) => {
    if (!(e instanceof UsageError)) throw e;
    return { message: e.message };
  });
  return typeof code === 'number' ? { code, err: stderr.text() } : { code: 2, err: stderr.text() + code.message };
};

describe('htorder watch s3://BUCKET/PREFIX', () => {
  it('runs a dropped object once and leaves it with its reports under done/', async () => {
    const w = await startWatch({ target: target(), flags: { bucketLedger: stateUrl() } }, env);
    try {
      await put('a.yaml', manifest('BA', 2));
      await put('bad.yaml', manifest('BB').replace('quantity: 50', 'quantity: 0'));
      await put('notes.md', 'not a manifest');
      await waitFor(
        async () =>
          (await keys('done/')).includes('done/a.yaml') && (await keys('failed/')).includes('failed/bad.yaml')
            ? true
            : undefined,
        'both finished',
      );
      expect(await keys('done/')).toEqual(['done/a.yaml', 'done/a.yaml.result.csv', 'done/a.yaml.result.json']);
      expect(await keys('failed/')).toEqual([
        'failed/bad.yaml',
        'failed/bad.yaml.errors.txt',
        'failed/bad.yaml.result.csv',
        'failed/bad.yaml.result.json',
      ]);
      const report = JSON.parse(await text('done/a.yaml.result.json'));
      expect(report).toMatchObject({ command: 'watch', input: { file: `s3://${s3.bucket}/${prefix}done/a.yaml` } });
      expect(await text('failed/bad.yaml.errors.txt')).toMatch(/^bad\.yaml:\d+:\d+: /);
      expect(await jobsOf()).toEqual(['BA-1', 'BA-2']);
      // processing/ is empty (claims released) and notes.md was left alone.
      await waitFor(async () => ((await keys('processing/')).length === 0 ? true : undefined), 'claims released');
      expect((await keys()).filter((k) => !k.includes('/'))).toEqual(['.htorder-ledger', 'notes.md']);
      // The ledger lives in the bucket, under the state prefix; nothing of it under the drop prefix.
      expect((await stateKeys('ledger/')).filter((k) => k.endsWith('.json'))).toHaveLength(2);
      expect(await keys('.htorder/')).toEqual([]);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  // Each input through a watcher is dozens of requests to the S3 server (its claim, its copy,
  // the bucket ledger's lock, intent and outcome of each job, its reports, its move), every one
  // of them (client, proxy and server) on this process's CPU: the wait is sized for that work on
  // a loaded machine, many times what it takes on an idle one, and the work is kept to what the
  // race needs, ten objects of one job each for six slots. What would compete with the work for
  // that CPU is kept small: the test waits for the watchers' own events, not for listings of the
  // bucket, and each watcher scans every 500 ms (a slot that frees takes the next queued object
  // at once, without a scan).
  it('two watchers on one bucket prefix, several objects in flight each, process every object exactly once', {
    timeout: 200_000,
  }, async () => {
    const flags = { watchParallelFiles: 3, bucketLedger: stateUrl(), scanIntervalMs: 500 };
    const a = await startWatch({ target: target(), flags }, env);
    const b = await startWatch({ target: target(), flags }, env);
    const finished = (): InputEvent[] =>
      [...a.events(), ...b.events()].filter(
        (e): e is InputEvent => e.kind === 'input' && (e.phase === 'done' || e.phase === 'failed'),
      );
    try {
      for (let i = 1; i <= 10; i++) await put(`f${i}.yaml`, manifest(`BF${i}`));
      await waitFor(() => (finished().length >= 10 ? true : undefined), '10 inputs finished', 150_000);
      expect(finished().map((e) => e.phase)).toEqual(Array(10).fill('done'));
      expect((await keys('done/')).filter((k) => k.endsWith('.yaml'))).toHaveLength(10);
      const expected = Array.from({ length: 10 }, (_, i) => `BF${i + 1}-1`).sort();
      expect(await jobsOf()).toEqual(expected);
      const done = await keys('done/');
      expect(done.filter((k) => /\d{8}T/.test(k))).toEqual([]); // nothing finished twice
      const claims = [...a.logs(), ...b.logs()].filter((l) => l.msg === 'claimed input');
      expect(claims).toHaveLength(10);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('resumes an input whose claim expired (its instance crashed) exactly once', async () => {
    // What a crashed instance leaves: the input in processing/ and a claim whose lease ran out.
    await put('processing/c.yaml', manifest('BC'));
    const putClaim = (name: string, body: string) =>
      s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: claimKey(name), Body: body }));
    await putClaim(
      'c.yaml',
      JSON.stringify({ owner: 'gone', host: 'elsewhere', pid: 1, until: '2020-01-01T00:00:00.000Z' }),
    );
    // And a live claim of another instance, which must be left alone.
    await put('processing/live.yaml', manifest('BL'));
    await putClaim(
      'live.yaml',
      JSON.stringify({ owner: 'alive', host: 'elsewhere', pid: 1, until: '2999-01-01T00:00:00.000Z' }),
    );
    const w = await startWatch({ target: target(), flags: { bucketLedger: stateUrl() } }, env);
    try {
      await waitFor(async () => ((await keys('done/')).includes('done/c.yaml') ? true : undefined), 'c.yaml in done/');
      await sleep(300);
      expect(await keys('processing/')).toEqual(['processing/live.yaml']);
      expect(await stateKeys('claims/')).toEqual([`claims/${s3.bucket}/${prefix}live.yaml.claim`]);
      expect(await jobsOf()).toEqual(['BC-1']);
    } finally {
      await w.stop();
    }
  });

  it('refuses a store without conditional writes unless --single-instance', async () => {
    const rawEnv = { ...env, HTORDER_S3_ENDPOINT: s3.rawEndpoint };
    const { code, err } = await watchOnce({ bucketLedger: stateUrl() }, { HTORDER_S3_ENDPOINT: s3.rawEndpoint });
    expect(code).toBe(2);
    expect(err).toMatch(/does not support conditional writes.*--single-instance/s);

    const w = await startWatch({ target: target(), flags: { singleInstance: true, bucketLedger: stateUrl() } }, rawEnv);
    try {
      await put('s.yaml', manifest('BS'));
      await waitFor(async () => ((await keys('done/')).includes('done/s.yaml') ? true : undefined), 's.yaml in done/');
      expect(await jobsOf()).toEqual(['BS-1']);
      expect(w.logs().some((l) => String(l.msg).includes('--single-instance'))).toBe(true);
    } finally {
      await w.stop();
    }
  });

  it("removes the conditional-write probes a watcher killed at start left over an hour ago, and never a user's object", async () => {
    const probe = (id: string): string => `.htorder-probe-${id}-0000-4000-8000-000000000000`;
    const hour = 60 * 60_000;
    // Killed mid-probe long ago: one under the drop prefix, one under the state prefix.
    await put(probe('0000dead'), 'probe 1');
    await s3.backdate(`${prefix}${probe('0000dead')}`, 2 * hour);
    const stateKey = `state-${prefix}${probe('1111dead')}`;
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: stateKey, Body: 'probe 1' }));
    await s3.backdate(stateKey, 2 * hour);
    // Another watcher's probe, in flight, and a user's objects that only look like one.
    await put(probe('2222a11e'), 'probe 1');
    await put('.htorder-probe-notes.yaml', 'mine');
    await s3.backdate(`${prefix}.htorder-probe-notes.yaml`, 2 * hour);
    await put('htorder-probe-0000dead-0000-4000-8000-000000000000.yaml', manifest('BP'));
    await s3.backdate(`${prefix}htorder-probe-0000dead-0000-4000-8000-000000000000.yaml`, 2 * hour);
    const w = await startWatch({ target: target(), flags: { bucketLedger: stateUrl() } }, env);
    try {
      await waitFor(async () => ((await keys('done/')).some((k) => k.endsWith('.yaml')) ? true : undefined), 'done');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect((await keys()).filter((k) => !k.includes('/'))).toEqual([
      '.htorder-ledger',
      probe('2222a11e'),
      '.htorder-probe-notes.yaml',
    ]);
    expect((await stateKeys()).filter((k) => !k.includes('/'))).toEqual([]);
    expect(await jobsOf()).toEqual(['BP-1']);
  });

  it("removes the state prefix's probe-UUID objects earlier builds left over an hour ago, and nothing else of that look", async () => {
    const old = (id: string): string => `probe-${id}-0000-4000-8000-000000000000`;
    const hour = 60 * 60_000;
    const atState = async (name: string, ageMs: number): Promise<void> => {
      const key = `state-${prefix}${name}`;
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'probe 1' }));
      if (ageMs > 0) await s3.backdate(key, ageMs);
    };
    // An earlier build killed mid-probe long ago; another earlier build's probe in flight; objects that only look like one.
    await atState(old('0000dead'), 2 * hour);
    await atState(old('2222a11e'), 0);
    await atState('probe-notes.txt', 2 * hour);
    await atState(`${old('0000dead')}.bak`, 2 * hour);
    const w = await startWatch({ target: target(), flags: { bucketLedger: stateUrl() } }, env);
    try {
      await put('a.yaml', manifest('OP'));
      await waitFor(async () => ((await keys('done/')).includes('done/a.yaml') ? true : undefined), 'done');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect((await stateKeys()).filter((k) => !k.includes('/'))).toEqual([
      `${old('0000dead')}.bak`,
      old('2222a11e'),
      'probe-notes.txt',
    ]);
    expect(await jobsOf()).toEqual(['OP-1']);
  });

  it('takes a multipart upload (its copy in processing/ has an ETag of its own) once, and removes it from the top', async () => {
    const key = `${prefix}multi.yaml`;
    const { UploadId } = await s3.client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key }));
    const part = await s3.client.send(
      new UploadPartCommand({ Bucket: s3.bucket, Key: key, UploadId, PartNumber: 1, Body: manifest('MP') }),
    );
    await s3.client.send(
      new CompleteMultipartUploadCommand({
        ...{ Bucket: s3.bucket, Key: key, UploadId },
        MultipartUpload: { Parts: [{ ETag: part.ETag, PartNumber: 1 }] },
      }),
    );
    const w = await startWatch({ target: target(), flags: { bucketLedger: stateUrl() } }, env);
    try {
      await waitFor(async () => ((await keys('done/')).includes('done/multi.yaml') ? true : undefined), 'done');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect((await keys()).filter((k) => !k.includes('/'))).toEqual(['.htorder-ledger']);
    expect((await keys('done/')).filter((k) => k.endsWith('.yaml'))).toEqual(['done/multi.yaml']);
    expect(await jobsOf()).toEqual(['MP-1']);
  });

  it('sets an object over watchMaxInputBytes aside to failed/ unread, as a folder does', async () => {
    const w = await startWatch(
      { target: target(), flags: { bucketLedger: stateUrl() } },
      { ...env, HTORDER_WATCH_MAX_INPUT_BYTES: '1000' },
    );
    try {
      const big = manifest('BM', 5);
      expect(big.length).toBeGreaterThan(1000);
      await put('big.yaml', big);
      await put('small.yaml', manifest('BN'));
      await waitFor(
        async () =>
          (await keys('failed/')).includes('failed/big.yaml') && (await keys('done/')).includes('done/small.yaml')
            ? true
            : undefined,
        'both finished',
      );
      expect(await keys('failed/')).toEqual(['failed/big.yaml', 'failed/big.yaml.errors.txt']);
      expect(await text('failed/big.yaml.errors.txt')).toContain(
        `it is ${big.length} bytes, over the 1000-byte limit for a dropped file (setting watchMaxInputBytes)`,
      );
      expect(await jobsOf()).toEqual(['BN-1']);
    } finally {
      await w.stop();
    }
  });

  it('says a store refused the credentials or could not be reached (exit 3), never that it lacks conditional writes', async () => {
    const cases: Record<string, string>[] = [
      { AWS_ACCESS_KEY_ID: 'AKIAUNKNOWNKEY' },
      // A port nothing listens on: connect refused at once.
      { HTORDER_S3_ENDPOINT: 'http://127.0.0.1:1' },
    ];
    for (const extra of cases) {
      for (const singleInstance of [false, true]) {
        const { code, err } = await watchOnce({ bucketLedger: stateUrl(), singleInstance }, extra);
        expect({ code, err }).toEqual({
          code: 3,
          err: expect.stringMatching(
            new RegExp(`cannot use s3://${s3.bucket}/state-${prefix}: .*(InvalidAccessKeyId|ECONNREFUSED)`),
          ),
        });
        expect(err).not.toMatch(/conditional writes/);
      }
    }
  });
});

describe('htorder watch s3://…: where the ledger and claims live', () => {
  it('refuses to start without bucketLedger, naming the setting and an example', async () => {
    const { code, err } = await watchOnce({});
    expect(code).toBe(2);
    expect(err).toContain('needs bucketLedger (--bucket-ledger, HTORDER_BUCKET_LEDGER or a profile)');
    expect(err).toContain(`--bucket-ledger s3://${s3.bucket}/htorder-state/`);
    expect(await keys()).toEqual([]);
  });

  it('refuses a ledger under the drop prefix, or one the drop prefix lies under', async () => {
    for (const ledger of [`${target()}state/`, `${target()}.htorder/`, `s3://${s3.bucket}/`]) {
      const { code, err } = await watchOnce({ bucketLedger: ledger });
      expect(code).toBe(2);
      expect(err).toContain(`overlaps the drop location ${target()}`);
    }
    expect(await keys()).toEqual([]);
    // In another bucket, the same prefix is not the drop location; beside it, neither.
    const drop = { bucket: s3.bucket, prefix };
    expect(bucketStateOf(`s3://other-bucket/${prefix}`, drop)).toEqual({ bucket: 'other-bucket', prefix });
    expect(bucketStateOf(`s3://${s3.bucket}/${prefix.slice(0, -1)}-state`, drop).prefix).toBe(
      `${prefix.slice(0, -1)}-state/`,
    );
    expect(() => bucketStateOf('/var/lib/htorder', drop)).toThrow('is not an s3://BUCKET/PREFIX/ URL');
  });

  it("refuses a ledger under another route's drop location named in the config file", async () => {
    const dir = await tempDir('htorder-bucket-routes-');
    try {
      const config = join(dir.path, 'config.yaml');
      const other = `s3://${s3.bucket}/other-drop/`;
      await writeFile(config, `routes:\n  - where: ${other}\n    match: "*"\n`, { mode: 0o600 });
      const { code, err } = await watchOnce({ bucketLedger: `${other}ledger/` }, { HTORDER_CONFIG: config });
      expect(code).toBe(2);
      expect(err).toContain(`overlaps the drop location ${other}`);
    } finally {
      await dir.remove();
    }
  });

  it('says once that a ledger left under the drop prefix by an earlier build is no longer read', async () => {
    await put('.htorder/ledger/acct/PO-1.json', '{}');
    const w = await startWatch({ target: target(), flags: { bucketLedger: stateUrl() } }, env);
    try {
      const told = w.logs().filter((l) => String(l.msg).includes('is no longer read'));
      expect(told).toHaveLength(1);
      expect(String(told[0]!.msg)).toContain(`the ledger is ${stateUrl()}ledger/`);
    } finally {
      await w.stop();
    }
  });
});

describe('htorder watch s3://…: held/', () => {
  it('an object over a limit lands in held/; approved in the bucket ledger, it is taken back, submitted once, and ends in done/', async () => {
    // The ledger set as the recipe sets it (environment): approve finds it without --ledger.
    const limited = { ...env, HTORDER_MAX_JOB_COST: '1', HTORDER_BUCKET_LEDGER: stateUrl() };
    const w = await startWatch({ target: target() }, limited);
    try {
      await put('big.yaml', manifest('BH', 1));
      await waitFor(
        async () => ((await keys('held/')).includes('held/big.yaml.result.json') ? true : undefined),
        'held',
      );
      expect(await jobsOf()).toEqual([]);
      const out = new Writable({ write: (_c, _e, cb) => cb() });
      let said = '';
      const err = new Writable({
        write: (c, _e, cb) => {
          said += String(c);
          cb();
        },
      });
      const code = await runApprove(
        { paths: [], flags: {}, list: true, ledger: stateUrl() },
        { stdout: out, stderr: err, env: limited, cwd: state.path },
      );
      expect(code).toBe(0);
      expect(said).toContain('BH-1');
      const local = join(state.path, 'big.yaml');
      await writeFile(local, await text('held/big.yaml'));
      expect(
        await runApprove({ paths: [local], flags: {} }, { stdout: out, stderr: err, env: limited, cwd: state.path }),
      ).toBe(0);
      await waitFor(async () => ((await keys('done/')).includes('done/big.yaml') ? true : undefined), 'done');
      expect(await jobsOf()).toEqual(['BH-1']);
      expect(await keys('held/')).toEqual([]);
    } finally {
      await w.stop();
    }
  });
});
