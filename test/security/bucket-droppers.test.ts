import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { type DropperEndpoint, S3_CREDENTIALS, startDropperEndpoint, startTestS3, type TestS3 } from '../support/s3.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * A dropper of a watched bucket may Get, Put and Delete objects under the drop prefix and list
 * it, nothing more (the proxy in front of the server enforces that policy, as IAM would). It
 * attacks, from a process of its own, everything of the watcher's it can reach: approves held
 * jobs, deletes the ledger entries of sent orders, resets the day's spend, deletes the content
 * index, plants `submitted` entries and claims that never run out; and tries the same under the
 * watcher's state prefix. None of it may send a held job, send an order twice, stop an order or
 * hold an input: the ledger and the claims live where droppers cannot write.
 */

let sandbox: Sandbox;
let apiEnv: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;
let s3: TestS3;
let env: Record<string, string>;

beforeAll(async () => {
  state = await tempDir('htorder-bucket-droppers-');
  ({ sandbox, env: apiEnv } = await sandboxWithEnv(state.path));
  s3 = await startTestS3({ conditional: true });
  env = { ...apiEnv, ...s3.env };
});
afterAll(async () => {
  await s3?.close();
  await sandbox?.close();
  await state?.remove();
});

let n = 0;
let drop: string;
let statePrefix: string;
let dropper: DropperEndpoint;
beforeEach(async () => {
  await sandbox.admin.reset();
  n += 1;
  drop = `incoming${n}/`;
  statePrefix = `htorder-state${n}/`;
  dropper = await startDropperEndpoint(s3, drop);
  return () => dropper.close();
});

const put = (name: string, body: string) =>
  s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${drop}${name}`, Body: body }));
const has = async (key: string): Promise<true | undefined> => {
  const res = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${drop}${key}` }));
  return (res.Contents ?? []).some((o) => o.Key === `${drop}${key}`) ? true : undefined;
};
const jobsOf = async (): Promise<string[]> => (await sandbox.admin.jobs()).map((j) => j.orderNumber ?? '?').sort();
const statusOf = async (key: string): Promise<string> => {
  const res = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${drop}${key}` }));
  return (JSON.parse(await res.Body!.transformToString()) as { jobs: { status: string }[] }).jobs[0]!.status;
};

/** What the dropper's process did under the drop prefix, and how each try on the state prefix was answered. */
interface Attack {
  done: string[];
  state: Record<string, string>;
}

/**
 * The dropper, in a process of its own with the dropper's endpoint only: every ledger object
 * and claim it finds under the drop prefix forged, `plant` orders entered as submitted beside
 * any ledger entry it finds, `claims` made for names not dropped yet (lasting till 2999), and
 * each of these tried under the state prefix too.
 */
async function attack(opts: { plant?: string[]; claims?: string[] } = {}): Promise<Attack> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', DROPPER], {
    // The repository, where the AWS SDK is installed.
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: {
      PATH: process.env.PATH,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ENDPOINT: dropper.endpoint,
      BUCKET: s3.bucket,
      DROP: drop,
      STATE: statePrefix,
      PLANT: (opts.plant ?? []).join(','),
      CLAIMS: (opts.claims ?? []).join(','),
      KEY_ID: S3_CREDENTIALS.accessKeyId,
      SECRET: S3_CREDENTIALS.secretAccessKey,
    },
  });
  return JSON.parse(stdout) as Attack;
}

const DROPPER = String.raw`
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
const { ENDPOINT, BUCKET, DROP, STATE, PLANT, CLAIMS, KEY_ID, SECRET } = process.env;
const s3 = new S3Client({ endpoint: ENDPOINT, forcePathStyle: true, region: 'us-east-1',
  credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET },
  requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
const keysUnder = async (prefix) => {
  const out = [];
  let token;
  do {
    const res = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
    out.push(...(res.Contents ?? []).map((o) => o.Key));
    token = res.NextContinuationToken;
  } while (token);
  return out;
};
const text = async (key) => (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body.transformToString();
const put = (key, body) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
const del = (key) => s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
const forever = JSON.stringify({ owner: 'dropper', host: 'dropper', pid: 1, until: '2999-01-01T00:00:00.000Z' });
const safeName = (v) =>
  v.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 60) + '-' +
  createHash('sha256').update(v, 'utf8').digest('hex').slice(0, 16);
const day = new Date().toISOString().slice(0, 10);
const entry = (account, orderNumber) => JSON.stringify({ ledgerVersion: 1, account, orderNumber, payloadHash: 'x',
  state: 'submitted', attempts: 1, intentAt: new Date().toISOString(), jobNumber: 1 });
async function forge(key) {
  const name = key.slice(key.lastIndexOf('/') + 1);
  if (name.startsWith('.approval-')) {
    const note = JSON.parse(await text(key));
    note.approval = { fingerprint: note.fingerprint, by: 'dropper', at: new Date().toISOString() };
    await put(key, JSON.stringify(note));
    return 'approved';
  }
  if (name.startsWith('.spent-')) {
    await put(key, JSON.stringify({ noteVersion: 1, day: name.slice(7), orders: {} }));
    return 'spend reset';
  }
  if (name.startsWith('.content-')) return del(key).then(() => 'content index deleted');
  if (name.endsWith('.claim')) return put(key, forever).then(() => 'claim renewed');
  if (/\/ledger\/[^/]+\/[^./][^/]*\.json$/.test(key) && JSON.parse(await text(key)).state === 'submitted')
    return del(key).then(() => 'unsubmitted');
  return undefined;
}
const done = [];
const accounts = new Map();
for (const key of await keysUnder(DROP)) {
  const folder = /^(.*\/ledger\/[^/]+\/)[^./][^/]*\.json$/.exec(key)?.[1];
  if (folder && !accounts.has(folder)) accounts.set(folder, JSON.parse(await text(key)).account);
  const did = await forge(key);
  if (did) done.push(did + ': ' + key);
}
for (const order of PLANT.split(',').filter(Boolean))
  for (const [folder, account] of accounts) {
    await put(folder + safeName(order) + '.json', entry(account, order));
    done.push('planted ' + order + ': ' + folder);
  }
for (const name of CLAIMS.split(',').filter(Boolean)) {
  await put(DROP + 'processing/.' + name + '.claim', forever);
  done.push('claimed ' + name);
}
const answer = (p) => p.then(() => 'done', (e) => String(e.$metadata?.httpStatusCode ?? e.name));
const account = STATE + 'ledger/us-demo/';
const claims = CLAIMS.split(',').filter(Boolean);
const state = {
  list: await answer(keysUnder(STATE)),
  approve: await answer(put(account + '.approval-x', '{}')),
  unsubmit: await answer(del(account + safeName('x') + '.json')),
  'reset spend': await answer(put(account + '.spent-' + day, '{}')),
  'delete content index': await answer(del(account + '.content-x')),
  plant: await answer(put(account + safeName('x') + '.json', entry('us-demo', 'x'))),
  claim: await answer(put(STATE + 'claims/' + BUCKET + '/' + DROP + (claims[0] ?? 'x.yaml') + '.claim', forever)),
};
console.log(JSON.stringify({ done, state }));
`;

/** Every try on the state prefix was refused by the store: the dropper's policy does not reach it. */
function expectRefused(state: Record<string, string>): void {
  expect(Object.keys(state).length).toBe(7);
  for (const [what, answer] of Object.entries(state)) expect(`${what}: ${answer}`).toBe(`${what}: 403`);
  expect(dropper.denied.every((d) => d.key.startsWith(statePrefix))).toBe(true);
}

describe('a dropper with access to the drop prefix only', () => {
  it('cannot approve a held job, unsubmit a sent order, plant a submitted entry or hold an input with a claim', async () => {
    const flags = { bucketLedger: `s3://${s3.bucket}/${statePrefix}` };
    const w = await startWatch({ target: `s3://${s3.bucket}/${drop}`, flags }, { ...env, HTORDER_MAX_JOB_COST: '200' });
    try {
      await put('a.yaml', manifest('DA'));
      await put('big.yaml', manifest('DH').replace('quantity: 50', 'quantity: 500'));
      await waitFor(() => has('done/a.yaml'), 'a.yaml done');
      await waitFor(() => has('held/big.yaml.result.json'), 'big.yaml held');
      expect(await jobsOf()).toEqual(['DA-1']);

      const { done, state } = await attack({ plant: ['DP-1'], claims: ['c.yaml'] });
      expectRefused(state);
      // Under the drop prefix there was nothing of the ledger to forge: only its own claim was made.
      expect(done).toEqual(['claimed c.yaml']);

      // The same order dropped again, the planted order, and the input with the dropper's claim.
      await put('a2.yaml', manifest('DA'));
      await put('p.yaml', manifest('DP'));
      await put('c.yaml', manifest('DC'));
      for (const name of ['a2.yaml', 'p.yaml', 'c.yaml']) await waitFor(() => has(`done/${name}`), `${name} done`);
      // Scans that would take back an approved held input.
      await sleep(1000);
      expect(await jobsOf()).toEqual(['DA-1', 'DC-1', 'DP-1']);
      expect(await statusOf('done/a2.yaml.result.json')).toBe('already-submitted');
      expect(await statusOf('done/p.yaml.result.json')).toBe('submitted');
      expect(await has('held/big.yaml')).toBe(true);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it("cannot reset the day's spend or delete the content index", async () => {
    const flags = { bucketLedger: `s3://${s3.bucket}/${statePrefix}` };
    // Each reorder of 50 is estimated at 150.00: one fits in a day of 200, two do not.
    const limits = { HTORDER_MAX_DAILY_COST: '200', HTORDER_DUPLICATE_WINDOW: '1d' };
    const w = await startWatch({ target: `s3://${s3.bucket}/${drop}`, flags }, { ...env, ...limits });
    try {
      await put('d1.yaml', manifest('DD'));
      await waitFor(() => has('done/d1.yaml'), 'd1.yaml done');

      const { done, state } = await attack();
      expectRefused(state);
      expect(done).toEqual([]);

      // The same content under another number (a suspected duplicate), and other content.
      await put('d2.yaml', manifest('DE'));
      await put('d3.yaml', manifest('DF').replace('Ana Ruiz', 'Bo Chen'));
      for (const name of ['d2.yaml', 'd3.yaml']) await waitFor(() => has(`held/${name}.result.json`), `${name} held`);
      expect(await jobsOf()).toEqual(['DD-1']);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });
});
