import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { sandboxEnv } from '../../src/core/config/sandbox-config.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import type { LedgerEntry } from '../../src/storage/ledger/model.js';
import { type Proc, sleep, spawnHtorder } from './chaos.js';
import type { FleetLedger } from './chaos-scenarios.js';
import { requireDist } from './dist.js';
import type { PgTestCluster } from './pg-cluster.js';
import { manifest } from './yaml-manifests.js';

/**
 * Hosts of a fleet for the tests: each an htorder process with a state dir of its own (as a
 * separate machine has), all naming one ledger database (ledgerUrl), against one sandbox. The
 * sandbox's own record of created jobs is the count.
 */
export interface Fleet {
  /** The env of host `n`: the sandbox's account, its own state dir, the shared ledger. */
  env(host: number, extra?: Record<string, string>): Record<string, string>;
  /** Starts `htorder ARGS` as host `n`, in `cwd`. */
  spawn(host: number, args: string[], cwd: string, extra?: Record<string, string>): Proc;
  /** Every entry of the shared ledger. */
  entries(): Promise<LedgerEntry[]>;
  url: string;
}

/**
 * The fleet of a describe block (call it inside the block): one sandbox for the block, started
 * once the CLI is built; before each test the sandbox reset, its faults cleared, and a fleet
 * on a new ledger database.
 */
export function useFleet(cluster: PgTestCluster | undefined): { readonly sandbox: Sandbox; readonly fleet: Fleet } {
  let sandbox: Sandbox | undefined;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    requireDist();
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(() => sandbox?.close());
  beforeEach(async () => {
    await sandbox!.admin.reset();
    await sandbox!.admin.clearFaults();
    fleet = await startFleet(cluster!, sandbox!);
  });
  return {
    get sandbox() {
      return sandbox!;
    },
    get fleet() {
      return fleet!;
    },
  };
}

export async function startFleet(cluster: PgTestCluster, sandbox: Sandbox): Promise<Fleet> {
  const url = await cluster.createDatabase();
  const root = await mkdtemp(join(tmpdir(), 'htorder-fleet-'));
  const stateDirs = new Map<number, string>();
  const stateOf = (host: number): string => {
    let dir = stateDirs.get(host);
    if (!dir) {
      dir = join(root, `host-${host}-state`);
      stateDirs.set(host, dir);
    }
    return dir;
  };
  const env = (host: number, extra: Record<string, string> = {}): Record<string, string> => ({
    ...sandboxEnv(sandbox, 'us-demo'),
    ...cluster.env,
    HTORDER_STATE_DIR: stateOf(host),
    HTORDER_LEDGER_URL: url,
    HTORDER_LOCK_STALE_MS: '2000',
    HTORDER_ARTWORK_CHECK: 'off',
    HTORDER_DUPLICATE_WINDOW: '0',
    HTORDER_LOG_LEVEL: 'warn',
    ...extra,
  });
  return {
    url,
    env,
    spawn: (host, args, cwd, extra) => spawnHtorder(args, { env: env(host, extra), cwd }),
    entries: () => entriesOf(cluster, url),
  };
}

/** How many jobs the sandbox created per order number: every count must be 1. */
export async function createdPerOrder(sandbox: Sandbox): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const job of await sandbox.admin.jobs())
    counts.set(job.orderNumber ?? '?', (counts.get(job.orderNumber ?? '?') ?? 0) + 1);
  return counts;
}

/** A folder holding one manifest of `n` orders `PREFIX-1..n`, as `orders.yaml`. */
export async function manifestFolder(prefix: string, n: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'htorder-fleet-work-'));
  await writeFile(join(dir, 'orders.yaml'), manifest(prefix, n));
  return dir;
}

/**
 * Three watchers, each with its own state dir, on one drop folder of `files` one-order files;
 * the first is killed with SIGKILL once about half the orders exist (and not restarted). Resolves
 * when every file is in done/, with the watchers stopped (SIGTERM) and their exit codes.
 */
export async function watchersWithAKill(
  fleet: Fleet,
  sandbox: Sandbox,
  files: number,
  deadlineMs: number,
): Promise<{ codes: (number | null)[]; killedAt: number; done: string[] }> {
  const drop = await mkdtemp(join(tmpdir(), 'htorder-fleet-drop-'));
  await mkdir(drop, { recursive: true });
  for (let i = 1; i <= files; i++) await writeFile(join(drop, `o${i}.yaml`), manifest(`W${i}`, 1));
  const args = [
    'watch',
    drop,
    '--scan-interval',
    '100',
    '--stable-time',
    '100',
    '--lease',
    '2000',
    '--retry-min',
    '200',
  ];
  const watchers = [0, 1, 2].map((h) => fleet.spawn(h, args, drop, { HTORDER_LOG_LEVEL: 'info' }));
  const deadline = Date.now() + deadlineMs;
  const inputsDone = async () => (await readdir(join(drop, 'done')).catch(() => [])).filter((n) => n.endsWith('.yaml'));
  let killedAt = -1;
  try {
    while ((await inputsDone()).length < files) {
      if (Date.now() > deadline)
        throw new Error(
          `watchers did not finish in ${deadlineMs / 1000} s:\n${watchers.map((w) => w.output().slice(-1500)).join('\n---\n')}`,
        );
      if (killedAt < 0 && (await sandbox.admin.jobs()).length >= files / 2) {
        killedAt = (await sandbox.admin.jobs()).length;
        watchers[0]!.child.kill('SIGKILL');
      }
      await sleep(100);
    }
    for (const w of watchers.slice(1)) w.child.kill('SIGTERM');
    const codes = await Promise.all(watchers.map((w) => w.exited));
    return { codes, killedAt, done: await inputsDone() };
  } finally {
    for (const w of watchers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  }
}

/** A fresh database of the test cluster as a chaos scenario's fleet ledger (chaos-scenarios.ts). */
export async function fleetLedger(cluster: PgTestCluster): Promise<FleetLedger> {
  const url = await cluster.createDatabase();
  return {
    env: { ...cluster.env, HTORDER_LEDGER_URL: url },
    entries: () => entriesOf(cluster, url),
    async restart(downMs) {
      await cluster.stop();
      await sleep(downMs);
      await cluster.start();
    },
  };
}

/** Every entry of the ledger database at `url`. */
async function entriesOf(cluster: PgTestCluster, url: string): Promise<LedgerEntry[]> {
  const u = new URL(url);
  const client = new pg.Client({
    host: u.hostname,
    port: Number(u.port),
    user: cluster.user,
    password: cluster.password,
    database: u.pathname.slice(1),
  });
  await client.connect();
  try {
    const { rows } = await client.query<{ entry: LedgerEntry }>('SELECT entry FROM htorder.entries');
    return rows.map((r) => r.entry);
  } catch (err) {
    // No host has opened the ledger yet: its tables do not exist, and it holds nothing.
    if ((err as { code?: string }).code === '42P01') return [];
    throw err;
  } finally {
    await client.end();
  }
}
