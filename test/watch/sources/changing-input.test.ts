import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { open, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InputEvent } from '../../../src/watch/events.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { isLeaseToken } from '../../../src/storage/folder-lease.js';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';
import { startTestS3, type TestS3 } from '../../support/s3.js';
import { tempDir } from '../../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor, type RunningWatch } from '../../support/watch-harness.js';
import { CODED_ADDRESS } from '../../support/yaml-manifests.js';

/**
 * Never act on a file that is still changing (issue 15, docs/watch.md): a writer that pauses
 * longer than the stable time has its file claimed; whatever it writes next must not let a
 * partial manifest submit anything. The tests are made deterministic by an API gate: POST
 * /Jobs dry runs (or creates) wait at a loopback proxy until the test lets them through, so
 * the writer resumes while the watcher is known to be mid-way — and each pause is longer than
 * the stable time by construction, because the file was claimed during it.
 */

/** POST /Jobs dry runs, POST /Jobs creates, or GET /Jobs/{n} (the read before a change is sent). */
type Held = 'validate' | 'create' | 'read';

/** A loopback proxy in front of the sandbox that can hold POST /Jobs dry runs or creates, or job reads. */
interface ApiGate {
  /** Origin of the proxy (http://127.0.0.1:PORT). */
  origin: string;
  /** From now on, hold this kind of request until release(). */
  hold(kind: Held): void;
  /** How many requests are held now. */
  held(): number;
  /** Lets the held requests through; with `next`, holds that kind again from now on. */
  release(next?: Held): void;
  close(): Promise<void>;
}

function kindOf(method: string, path: string, body: Buffer): Held | undefined {
  if (method === 'GET' && /\/Jobs\/\d+$/i.test(path)) return 'read';
  if (method !== 'POST' || !/\/Jobs$/i.test(path)) return undefined;
  return (JSON.parse(body.toString('utf8')) as { validateOnly?: boolean }).validateOnly === true
    ? 'validate'
    : 'create';
}

async function apiGate(target: string): Promise<ApiGate> {
  const upstream = new URL(target);
  let holding: Held | undefined;
  let held = 0;
  let open!: () => void;
  let gate = Promise.resolve();
  const arm = (kind: Held | undefined): void => {
    holding = kind;
    held = 0;
    gate = new Promise<void>((r) => (open = r));
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      if (holding && kindOf(req.method ?? '', (req.url ?? '').split('?')[0], body) === holding) {
        const wait = gate;
        held += 1;
        await wait;
      }
      const up = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: arm,
    held: () => held,
    release(next) {
      const opened = open;
      arm(next);
      opened?.();
      if (next === undefined) holding = undefined;
    },
    close: () =>
      new Promise<void>((r) => {
        open?.();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A manifest job of two lines (50 and 25 of one asset): a job cut between them is valid YAML with a line missing. */
const job = (orderNumber: string): { head: string; first: string; second: string } => ({
  head: `  - orderNumber: ${orderNumber}\n${CODED_ADDRESS}    items:\n`,
  first: '      - { itemType: Asset, code: A10001, quantity: 50 }\n',
  second: '      - { itemType: Asset, code: A10001, quantity: 25 }\n',
});
const whole = (orderNumber: string): string => Object.values(job(orderNumber)).join('');
const HEADER = 'version: 1\njobs:\n';

let sandbox: Sandbox;
let gate: ApiGate;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  state = await tempDir('htorder-changing-state-');
  let sandboxEnv: Record<string, string>;
  ({ sandbox, env: sandboxEnv } = await sandboxWithEnv(state.path));
  gate = await apiGate(sandbox.url);
  // The watcher talks to the sandbox through the gate.
  env = Object.fromEntries(
    Object.entries(sandboxEnv).map(([k, v]) => [k, v.replaceAll(new URL(sandbox.url).origin, gate.origin)]),
  );
});
afterAll(async () => {
  await gate.close();
  await sandbox.close();
  await state.remove();
});
beforeEach(async () => {
  await sandbox.admin.reset();
  gate.release();
});

/** Every job created on the sandbox (a duplicate would show twice), by order number: the quantities of its lines. */
const created = async (): Promise<[string, number[]][]> =>
  (await sandbox.admin.jobs())
    .map((j): [string, number[]] => [
      j.orderNumber ?? '?',
      ((j.request as { items?: { quantity?: number }[] }).items ?? []).map((i) => i.quantity ?? 0),
    ])
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
const BOTH_LINES = [50, 25];
const inputEvents = (w: RunningWatch, phases: string[]): InputEvent[] =>
  w.events().filter((e): e is InputEvent => e.kind === 'input' && phases.includes(e.phase));
const requeued = (w: RunningWatch): InputEvent[] => inputEvents(w, ['requeued']);
/** Waits until `n` attempts have ended (requeued, done or failed), so a wrong ending fails the assertions that follow. */
const attemptsEnded = (w: RunningWatch, n: number): Promise<InputEvent[]> =>
  waitFor(() => {
    const ended = inputEvents(w, ['requeued', 'done', 'failed']);
    return ended.length >= n ? ended : undefined;
  }, `${n} attempt(s) to end`);
const statuses = async (reportPath: string): Promise<Record<string, string>> =>
  Object.fromEntries(
    (JSON.parse(await readFile(reportPath, 'utf8')) as { jobs: { orderNumber: string; status: string }[] }).jobs.map(
      (j) => [j.orderNumber, j.status],
    ),
  );

describe('a drop folder file that changes while it is processed', () => {
  let drop: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    drop = await tempDir('htorder-changing-drop-');
  });
  afterEach(async () => {
    await drop.remove();
  });
  const ls = async (sub = ''): Promise<string[]> => (await readdir(join(drop.path, sub)).catch(() => [])).sort();

  it('never submits from a partial file: paused at a job boundary, then inside a job, then complete', async () => {
    const w = await startWatch({ target: drop.path }, env);
    const path = join(drop.path, 'half.yaml');
    // One writer through one descriptor, as a slow network copy: it follows the file wherever it is moved.
    const writer = await open(path, 'a');
    try {
      const [a, b, c] = [job('HALF-1'), job('HALF-2'), job('HALF-3')];
      gate.hold('validate');
      // 1. Cut at a job boundary: a valid manifest of one job.
      await writer.write(HEADER + a.head + a.first + a.second);
      await waitFor(() => (gate.held() > 0 ? true : undefined), 'the first claim to reach a dry run');
      expect(await ls('processing')).toContain('half.yaml');
      await writer.write(b.head + b.first);
      gate.release('validate');
      await attemptsEnded(w, 1);
      expect(await created()).toEqual([]);
      expect(requeued(w)).toHaveLength(1);
      expect(requeued(w)[0]).toMatchObject({ name: 'half.yaml', location: path });
      expect(requeued(w)[0].problem).toMatch(
        /^changed while being processed \(its size changed from \d+ to \d+ bytes\): nothing submitted; will be processed again once stable$/,
      );
      expect(await created()).toEqual([]);
      // 2. Cut inside a job: HALF-2 has one of its two lines, still a valid manifest.
      await waitFor(() => (gate.held() > 0 ? true : undefined), 'the second claim to reach a dry run');
      await writer.write(b.second + c.head + c.first + c.second);
      gate.release();
      await attemptsEnded(w, 2);
      expect(await created()).toEqual([]);
      expect(requeued(w)).toHaveLength(2);
      // 3. Complete: processed in full, each job once with all its lines.
      await waitFor(async () => ((await ls('done')).includes('half.yaml') ? true : undefined), 'half.yaml done');
      expect(await created()).toEqual([
        ['HALF-1', BOTH_LINES],
        ['HALF-2', BOTH_LINES],
        ['HALF-3', BOTH_LINES],
      ]);
      expect(await statuses(join(drop.path, 'done', 'half.yaml.result.json'))).toEqual({
        'HALF-1': 'submitted',
        'HALF-2': 'submitted',
        'HALF-3': 'submitted',
      });
      expect(await ls('failed')).toEqual([]);
      expect(await ls()).toEqual(['.htorder-ledger', 'done', 'failed', 'held', 'processing']);
      expect(await readFile(join(drop.path, 'done', 'half.yaml'), 'utf8')).toBe(
        HEADER + whole('HALF-1') + whole('HALF-2') + whole('HALF-3'),
      );
    } finally {
      await writer.close();
      gate.release();
      await w.stop();
    }
    const logged = w.logs().filter((l) => l.msg === 'input requeued');
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({ outcome: 'requeued', submitted: 0, file: path });
  });

  it('a change seen only before the move (after submits) requeues it; the jobs already submitted are not sent again', async () => {
    const w = await startWatch({ target: drop.path }, env);
    const path = join(drop.path, 'late.yaml');
    const writer = await open(path, 'a');
    try {
      gate.hold('create');
      await writer.write(HEADER + whole('LATE-1') + whole('LATE-2'));
      // A create waits at the gate: the check before submitting found the file unchanged.
      await waitFor(() => (gate.held() > 0 ? true : undefined), 'a create');
      await writer.write(whole('LATE-3'));
      gate.release();
      expect((await attemptsEnded(w, 1)).map((e) => e.phase)).toEqual(['requeued']);
      expect(requeued(w)[0].problem).toMatch(
        /^changed while being processed \(its size changed from \d+ to \d+ bytes\): 2 job\(s\) submitted before the change showed, not sent again; will be processed again once stable$/,
      );
      await waitFor(async () => ((await ls('done')).includes('late.yaml') ? true : undefined), 'late.yaml done');
      expect(await statuses(join(drop.path, 'done', 'late.yaml.result.json'))).toEqual({
        'LATE-1': 'already-submitted',
        'LATE-2': 'already-submitted',
        'LATE-3': 'submitted',
      });
      expect(await created()).toEqual([
        ['LATE-1', BOTH_LINES],
        ['LATE-2', BOTH_LINES],
        ['LATE-3', BOTH_LINES],
      ]);
      expect(await ls('done')).toEqual(['late.yaml', 'late.yaml.result.csv', 'late.yaml.result.json']);
    } finally {
      await writer.close();
      gate.release();
      await w.stop();
    }
  });

  it('sends no change of a submitted job from a partial file (a description cut mid-word)', async () => {
    const w = await startWatch({ target: drop.path }, env);
    try {
      await writeFile(join(drop.path, 'p.yaml'), `${HEADER}${whole('EDIT-1')}    description: Autumn promo\n`);
      await attemptsEnded(w, 1);
      await sandbox.admin.resetCalls();
      const path = join(drop.path, 'p2.yaml');
      const writer = await open(path, 'a');
      try {
        gate.hold('read');
        // The same order, its description being rewritten: cut mid-word, still valid YAML.
        await writer.write(`${HEADER}${whole('EDIT-1')}    description: Spr`);
        // The job is read before its change is sent: the file was claimed and is mid-way.
        await waitFor(() => (gate.held() > 0 ? true : undefined), 'the job read before the change');
        await writer.write('ing promo\n');
        gate.release();
        await attemptsEnded(w, 2);
        expect((await sandbox.admin.calls())['PATCH /Jobs/{jobNumber}'] ?? 0).toBe(0);
        expect(requeued(w)).toHaveLength(1);
        await waitFor(async () => ((await ls('done')).includes('p2.yaml') ? true : undefined), 'p2.yaml done');
      } finally {
        await writer.close();
      }
      expect((await sandbox.admin.calls())['PATCH /Jobs/{jobNumber}']).toBe(1);
      const report = JSON.parse(await readFile(join(drop.path, 'done', 'p2.yaml.result.json'), 'utf8')) as {
        jobs: { status: string; warnings?: { message: string }[]; errors?: { message: string }[] }[];
      };
      expect(report.jobs[0].status).toBe('already-submitted');
      expect(JSON.stringify(report.jobs[0])).toContain('Spring promo');
      expect(JSON.stringify(report.jobs[0])).not.toMatch(/"Spr"|'Spr'/);
      expect(await created()).toEqual([['EDIT-1', BOTH_LINES]]);
    } finally {
      gate.release();
      await w.stop();
    }
  });
});

describe('FolderSource: change detection and giving a file back', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let source: FolderSource;
  beforeEach(async () => {
    dir = await tempDir('htorder-recheck-');
    source = new FolderSource(dir.path, { leaseMs: 60_000, workDir: join(dir.path, '.work') });
    await source.init();
  });
  afterEach(async () => {
    await source.close();
    await dir.remove();
  });
  /** Without the source's lease token (folder-lease.ts). */
  const ls = async (sub = ''): Promise<string[]> =>
    (await readdir(join(dir.path, sub))).filter((n) => !isLeaseToken(n)).sort();
  /** A whole second, so the mtime restored after a rewrite is exactly the one seen at claim. */
  const MTIME = 1_700_000_000;

  it('sees nothing while the file is as copied', async () => {
    await writeFile(join(dir.path, 'a.yaml'), 'version: 1\n');
    const c = (await source.claim('a.yaml'))!;
    expect(await c.recheck('submit')).toBeUndefined();
    expect(await c.recheck('finish')).toBeUndefined();
  });

  it('sees a rewrite that kept the size and the modification time, by the hash', async () => {
    const path = join(dir.path, 'b.yaml');
    await writeFile(path, 'jobs: [A]\n');
    await utimes(path, MTIME, MTIME);
    const c = (await source.claim('b.yaml'))!;
    const inProcessing = join(dir.path, 'processing', 'b.yaml');
    const before = await stat(inProcessing);
    await writeFile(inProcessing, 'jobs: [B]\n');
    await utimes(inProcessing, MTIME, MTIME);
    const after = await stat(inProcessing);
    expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
    expect(await c.recheck('submit')).toEqual({
      what: 'its content changed (same size and modification time)',
      next: 'will be processed again once stable',
    });
    // The private copy is what was read at claim.
    expect(await readFile(c.path, 'utf8')).toBe('jobs: [A]\n');
  });

  it('sees growth by the size', async () => {
    const path = join(dir.path, 'c.yaml');
    await writeFile(path, 'version: 1\n');
    const c = (await source.claim('c.yaml'))!;
    await writeFile(join(dir.path, 'processing', 'c.yaml'), 'version: 1\njobs: []\n', { flag: 'a' });
    expect((await c.recheck('finish'))?.what).toBe('its size changed from 11 to 31 bytes');
  });

  it('gives a file back to the top, beside a new file of the same name, losing neither', async () => {
    await writeFile(join(dir.path, 'd.yaml'), 'first');
    const c = (await source.claim('d.yaml'))!;
    expect(await ls('processing')).toEqual(['.d.yaml.claim', 'd.yaml']);
    await writeFile(join(dir.path, 'd.yaml'), 'second, dropped meanwhile');
    const back = await c.requeue();
    expect(back).toMatch(/[/\\]d\.\d{8}T\d{9}Z\.yaml$/);
    expect(await readFile(back, 'utf8')).toBe('first');
    expect(await readFile(join(dir.path, 'd.yaml'), 'utf8')).toBe('second, dropped meanwhile');
    expect(await ls('processing')).toEqual([]);
    // The private copy (and this attempt's reports) went with the claim.
    await expect(stat(c.path)).rejects.toThrow();

    const again = (await source.claim('d.yaml'))!;
    expect(await again.requeue()).toBe(join(dir.path, 'd.yaml'));
    expect(await readFile(join(dir.path, 'd.yaml'), 'utf8')).toBe('second, dropped meanwhile');
  });
});

describe('an S3 object replaced by a newer upload while it is processed', () => {
  let s3: TestS3;
  let s3env: Record<string, string>;
  let prefix: string;
  let n = 0;
  beforeAll(async () => {
    s3 = await startTestS3({ conditional: true });
    s3env = { ...env, ...s3.env };
  });
  afterAll(async () => {
    await s3.close();
  });
  beforeEach(() => {
    prefix = `changing${++n}/`;
  });
  const put = (key: string, body: string) =>
    s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${prefix}${key}`, Body: body }));
  const keys = async (under = ''): Promise<string[]> => {
    const res = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}${under}` }));
    return (res.Contents ?? []).map((o) => o.Key!.slice(prefix.length)).sort();
  };

  it('before the first submit: nothing is submitted from the old upload; the newer one is processed in full', async () => {
    const w = await startWatch(
      { target: `s3://${s3.bucket}/${prefix}`, flags: { bucketLedger: `s3://${s3.bucket}/state-${prefix}` } },
      s3env,
    );
    try {
      const a = job('S3C-1');
      gate.hold('validate');
      await put('c.yaml', HEADER + a.head + a.first);
      await waitFor(() => (gate.held() > 0 ? true : undefined), 'the old upload at a dry run');
      await put('c.yaml', HEADER + whole('S3C-1') + whole('S3C-2'));
      gate.release();
      await waitFor(async () => ((await keys('done/')).includes('done/c.yaml') ? true : undefined), 'c.yaml done');
      expect(await created()).toEqual([
        ['S3C-1', BOTH_LINES],
        ['S3C-2', BOTH_LINES],
      ]);
      expect(requeued(w)).toHaveLength(1);
      expect(requeued(w)[0].problem).toBe(
        'changed while being processed (a newer upload of c.yaml arrived): nothing submitted; ' +
          'the newer upload will be processed in full instead',
      );
      // The old upload is gone (replaced, as the store itself would have), nothing left in processing/.
      const settled = ['.htorder-ledger', 'done/c.yaml', 'done/c.yaml.result.csv', 'done/c.yaml.result.json'].join();
      await waitFor(
        async () => ((await keys()).join() === settled ? true : undefined),
        'only done/c.yaml and its reports left',
      );
    } finally {
      gate.release();
      await w.stop();
    }
  });

  it('after submits: the old upload finishes as usual and the newer one is a new input', async () => {
    const w = await startWatch(
      { target: `s3://${s3.bucket}/${prefix}`, flags: { bucketLedger: `s3://${s3.bucket}/state-${prefix}` } },
      s3env,
    );
    try {
      gate.hold('create');
      await put('d.yaml', HEADER + whole('S3D-1'));
      await waitFor(() => (gate.held() > 0 ? true : undefined), 'the old upload at a create');
      await put('d.yaml', HEADER + whole('S3D-1') + whole('S3D-2'));
      gate.release();
      await waitFor(
        async () => ((await keys('done/')).filter((k) => k.endsWith('.yaml')).length === 2 ? true : undefined),
        'both uploads done',
      );
      expect(requeued(w)).toEqual([]);
      expect(await created()).toEqual([
        ['S3D-1', BOTH_LINES],
        ['S3D-2', BOTH_LINES],
      ]);
    } finally {
      gate.release();
      await w.stop();
    }
  });
});
