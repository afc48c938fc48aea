import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runPipelineCommand } from '../../src/cli/run-pipeline.js';
import { sandboxEnv } from '../../src/core/config/sandbox-config.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sink } from '../support/sink.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * Issue 13, finding 2: the same manifest run from a second working directory, through another
 * spelling of the base URL, or through a second ledger, created every order twice. Now the
 * ledger is per user, keyed by the account's identity, and a ledger that cannot vouch for the
 * account searches it before the first create of each order. The sandbox's own record of
 * created jobs (POST /Jobs that created something) is the count: exactly one per order.
 */

const N = 12;
let sandbox: Sandbox;
let root: string;
let stateHome: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox.close());
beforeEach(async () => {
  await sandbox.admin.reset();
  await sandbox.admin.clearFaults();
  await sandbox.admin.resetCalls();
  root = await mkdtemp(join(tmpdir(), 'htorder-ledger-dirs-'));
  stateHome = join(root, 'state-home');
});

/** A working directory of its own holding the same manifest. */
async function workDir(name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'orders.yaml'), manifest('PO', N));
  return dir;
}

async function run(
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stderr: string; stdout: string }> {
  const out = sink();
  const err = sink();
  const code = await runPipelineCommand(
    { command: 'run', files: [join(cwd, 'orders.yaml')], flags: {} },
    {
      stdout: out.stream,
      stderr: err.stream,
      cwd,
      env: {
        ...sandboxEnv(sandbox, 'us-demo'),
        XDG_STATE_HOME: stateHome,
        HTORDER_LOG_LEVEL: 'warn',
        // The same content under new order numbers is the workload here, not a suspected duplicate.
        HTORDER_DUPLICATE_WINDOW: '0',
        ...env,
      },
    },
  );
  return { code, stdout: out.text(), stderr: err.text() };
}

async function creates(): Promise<number> {
  const jobs = await sandbox.admin.jobs();
  const orders = new Set(jobs.map((j) => j.orderNumber));
  expect(orders.size, 'one job per order number').toBe(jobs.length);
  return jobs.length;
}

async function searches(): Promise<number> {
  return (await sandbox.admin.calls())['GET /Jobs/active'] ?? 0;
}

describe('one ledger per account, wherever htorder runs (issue 13, finding 2)', () => {
  it('the same manifest from two working directories creates each order once, and the ledger is per user (0700)', async () => {
    const a = await workDir('a');
    const b = await workDir('b');
    expect((await run(a)).code).toBe(0);
    expect(await creates()).toBe(N);
    await sandbox.admin.resetCalls();
    const second = await run(b);
    expect(second.code).toBe(0);
    expect(await creates()).toBe(N);
    // The per-user ledger vouches for the account after the first run: no search at all.
    expect(await searches()).toBe(0);
    expect((await sandbox.admin.calls())['POST /Jobs'] ?? 0).toBe(0);
    // Nothing is written into the working directories; the state dir is the user's own.
    expect(await readdir(a)).not.toContain('.htorder');
    expect((await stat(join(stateHome, 'htorder'))).mode & 0o777).toBe(0o700);
  });

  it('another spelling of the base URL is the same account (no search); another host name is searched, not resent', async () => {
    const a = await workDir('a');
    const url = sandboxEnv(sandbox, 'us-demo').HTORDER_BASE_URL ?? '';
    expect((await run(a)).code).toBe(0);
    await sandbox.admin.resetCalls();
    const shouted = url.replace('http://127.0.0.1', 'HTTP://127.0.0.1').replace(/\/?$/, '/');
    expect((await run(a, { HTORDER_BASE_URL: shouted })).code).toBe(0);
    expect(await creates()).toBe(N);
    expect(await searches()).toBe(0);
    const other = url.replace('127.0.0.1', 'localhost');
    const r = await run(a, { HTORDER_BASE_URL: other });
    expect(r.code, r.stderr).toBe(0);
    expect(await creates()).toBe(N);
    // A key the ledger has never vouched for: the account is checked (one listing of its jobs,
    // cheaper than a search per order), nothing sent.
    expect(await searches()).toBe(1);
  });

  it('a second ledger (another state dir, another machine) checks each unseen order on the account before its first create', async () => {
    const a = await workDir('a');
    expect((await run(a, { HTORDER_STATE_DIR: join(root, 'ledger-1') })).code).toBe(0);
    await sandbox.admin.resetCalls();
    const second = await run(a, { HTORDER_STATE_DIR: join(root, 'ledger-2') });
    expect(second.code).toBe(0);
    expect(await creates()).toBe(N);
    // One listing of the account's jobs (a page) instead of a search per order.
    expect(await searches()).toBe(1);
    expect((await sandbox.admin.calls())['GET /Jobs/{jobNumber}']).toBe(N);
    // Recorded as submitted by search: the next run of that ledger costs nothing.
    await sandbox.admin.resetCalls();
    expect((await run(a, { HTORDER_STATE_DIR: join(root, 'ledger-2') })).code).toBe(0);
    expect(await searches()).toBe(0);
    expect(await creates()).toBe(N);
  });

  it('a new ledger whose search is impossible sends nothing (exit 3), and the next run settles it', async () => {
    const a = await workDir('a');
    expect((await run(a, { HTORDER_STATE_DIR: join(root, 'ledger-1') })).code).toBe(0);
    await sandbox.admin.setFaults([{ route: 'GET /Jobs/active', kind: 'status', status: 503, retryAfterSeconds: 0 }]);
    const blocked = await run(a, { HTORDER_STATE_DIR: join(root, 'ledger-2') });
    expect(blocked.code).toBe(3);
    expect(await creates()).toBe(N);
    await sandbox.admin.clearFaults();
    expect((await run(a, { HTORDER_STATE_DIR: join(root, 'ledger-2') })).code).toBe(0);
    expect(await creates()).toBe(N);
  });

  it('reads the ledger htorder 0.1 kept in ./.htorder (its key, its place): nothing it submitted is resent', async () => {
    const a = await workDir('a');
    // As htorder 0.1 left it: ./.htorder/ledger, entries keyed `<baseUrl as configured>#<id>`.
    const scratch = join(root, 'scratch');
    expect((await run(a, { HTORDER_STATE_DIR: scratch })).code).toBe(0);
    const legacy = new FolderLedger(join(a, '.htorder'));
    const url = sandboxEnv(sandbox, 'us-demo').HTORDER_BASE_URL ?? '';
    for await (const e of new FolderLedger(scratch).entries()) {
      await legacy.write(
        { ...e, account: `${url}#${e.account.slice(e.account.lastIndexOf('#') + 1)}` },
        { guard: null },
      );
    }
    await rm(scratch, { recursive: true });
    await sandbox.admin.resetCalls();
    const r = await run(a);
    expect(r.code).toBe(0);
    expect(await creates()).toBe(N);
    // Every order came from the old ledger: none needed a search.
    expect(await searches()).toBe(0);
    expect(r.stderr).toContain(`read ${N} order(s) of this account from`);
  });

  it('HTORDER_VERIFY_NEW_ORDERS=always checks new orders on the account even on a ledger that vouches for it', async () => {
    const a = await workDir('a');
    expect((await run(a)).code).toBe(0);
    await writeFile(join(a, 'orders.yaml'), manifest('PX', 2));
    await sandbox.admin.resetCalls();
    expect((await run(a)).code).toBe(0);
    // A vouching ledger reads one page of the account's newest jobs (another writer?), no search.
    expect(await searches()).toBe(1);
    await writeFile(join(a, 'orders.yaml'), manifest('PY', 2));
    await sandbox.admin.resetCalls();
    expect((await run(a, { HTORDER_VERIFY_NEW_ORDERS: 'always' })).code).toBe(0);
    // Two new orders: one page of the account's jobs lists both.
    expect(await searches()).toBe(1);
    await writeFile(join(a, 'orders.yaml'), manifest('PZ', 1));
    await sandbox.admin.resetCalls();
    expect((await run(a, { HTORDER_VERIFY_NEW_ORDERS: 'always' })).code).toBe(0);
    // One new order: its own search.
    expect(await searches()).toBe(1);
    expect(await creates()).toBe(N + 5);
  });
});
