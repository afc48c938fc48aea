import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runLedgerImport, runLedgerStats } from '../../src/cli/ledger-command.js';
import { UsageError } from '../../src/core/errors.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import type { LedgerEntry } from '../../src/storage/ledger/model.js';
import { PgLedger } from '../../src/storage/ledger/pg-ledger.js';
import { PgDatabase } from '../../src/storage/pg/pg-database.js';
import { pgClusterForFile } from '../support/pg-cluster.js';
import { sink } from '../support/sink.js';
import { tempDir } from '../support/temp-files.js';

const cluster = await pgClusterForFile();
const account = 'https://api.us.example.com#1001';

const entry = (orderNumber: string, over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  ledgerVersion: 1,
  account,
  orderNumber,
  payloadHash: 'h',
  state: 'submitted',
  attempts: 1,
  intentAt: '2026-11-01T10:00:00.000Z',
  outcomeAt: '2026-11-01T10:00:01.000Z',
  jobNumber: 100,
  ...over,
});

describe.skipIf(!cluster)('htorder ledger import and stats', () => {
  const dbs: PgDatabase[] = [];
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.close();
  });
  const database = (url: string): PgLedger => {
    const db = new PgDatabase({
      connection: cluster!.connection(url),
      name: url,
      waitMs: 5000,
    });
    dbs.push(db);
    return new PgLedger(db, { leaseMs: 2000 });
  };
  const run = async (
    what: 'import' | 'stats',
    env: Record<string, string>,
    from?: string,
  ): Promise<{ code: number; out: string; err: string }> => {
    const out = sink();
    const err = sink();
    const io = { stdout: out.stream, stderr: err.stream, env, cwd: process.cwd() };
    const code =
      what === 'import'
        ? await runLedgerImport({ ...(from ? { from } : {}), json: true, flags: {} }, io)
        : await runLedgerStats({ json: true, flags: {} }, io);
    return { code, out: out.text(), err: err.text() };
  };

  it("copies a state dir's ledger once, never setting an order back, and a second import copies nothing", async () => {
    const url = await cluster!.createDatabase();
    const state = await tempDir();
    const file = new FolderLedger(state.path);
    await file.write(entry('PO-1', { jobNumber: 1 }), { guard: null });
    await file.write(entry('PO-2', { state: 'intent', outcomeAt: undefined, jobNumber: undefined }), { guard: null });
    await file.write(entry('PO-3', { jobNumber: 3, intentAt: '2026-10-01T10:00:00.000Z' }), { guard: null });
    await file.writeNote(account, `.held-${'a'.repeat(64)}`, { noteVersion: 1, jobs: [] });
    await file.writeNote(account, '.spent-2026-11-01', { noteVersion: 1, day: '2026-11-01', orders: { 'PO-1': 5 } });
    await file.writeNote(account, '.content-abc', { noteVersion: 2, orders: [] });
    await file.writeAccount({ ledgerVersion: 1, account, vouchedSince: '2026-10-01T00:00:00.000Z' });
    // The fleet moved on since: the database knows PO-2 as submitted (later than the file's intent).
    const db = database(url);
    await db.write(entry('PO-2', { jobNumber: 2, outcomeAt: '2026-11-02T00:00:00.000Z' }), { guard: null });
    const env = { ...cluster!.env, HTORDER_LEDGER_URL: url, HTORDER_STATE_DIR: state.path };

    const first = await run('import', env);
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ copied: 2, kept: 1, notes: 3, accounts: 1 });
    expect(await db.read({ account, orderNumber: 'PO-2' })).toMatchObject({ state: 'submitted', jobNumber: 2 });
    expect(await db.read({ account, orderNumber: 'PO-1' })).toMatchObject({ state: 'submitted', jobNumber: 1 });
    expect(await db.readNote(account, '.spent-2026-11-01')).toMatchObject({ orders: { 'PO-1': 5 } });
    // The file ledger's vouching is not carried over: other hosts may have sent what it never saw.
    expect(await db.readAccount(account)).toBeUndefined();

    const again = await run('import', env);
    expect(JSON.parse(again.out)).toMatchObject({ copied: 0, kept: 3, notes: 0 });

    // A later state in the file (a cancel recorded on the old host) does replace the database's.
    await file.write(entry('PO-1', { jobNumber: 1, cancelledAt: '2026-11-05T00:00:00.000Z' }), { guard: null });
    expect(JSON.parse((await run('import', env)).out)).toMatchObject({ copied: 1, kept: 2 });
    expect(await db.read({ account, orderNumber: 'PO-1' })).toMatchObject({ cancelledAt: '2026-11-05T00:00:00.000Z' });

    const stats = await run('stats', env);
    expect(stats.code).toBe(0);
    const shown = JSON.parse(stats.out) as { accounts: unknown[]; bytes: number };
    expect(shown.accounts).toEqual([
      {
        account,
        entries: 3,
        oldest: '2026-10-01T10:00:00.000Z',
        newest: '2026-11-01T10:00:00.000Z',
        bytes: expect.any(Number),
      },
    ]);
    expect(shown.bytes).toBeGreaterThan(0);
  });

  it('stats of a file ledger without ledgerUrl; import without one is a usage error', async () => {
    const state = await tempDir();
    await new FolderLedger(state.path).write(entry('PO-1'), { guard: null });
    const env = { HTORDER_STATE_DIR: state.path };
    const stats = await run('stats', env);
    expect(JSON.parse(stats.out)).toMatchObject({ ledger: state.path, accounts: [{ account, entries: 1 }] });
    await expect(run('import', env)).rejects.toThrow(/set ledgerUrl/);
  });

  it('refuses a ledgerUrl that holds a password, without repeating it', async () => {
    const state = await tempDir();
    const env = {
      HTORDER_STATE_DIR: state.path,
      HTORDER_LEDGER_URL: `postgres://htorder:Sup3r-s3cret-pw@127.0.0.1:${cluster!.port}/x`,
    };
    const failed = await run('stats', env).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(UsageError);
    expect((failed as Error).message).toMatch(/holds a password.*ledgerPasswordFile/);
    expect((failed as Error).message).not.toContain('Sup3r-s3cret-pw');
  });

  it('exits 3 when the database cannot be reached', async () => {
    const state = await tempDir();
    const env = {
      ...cluster!.env,
      HTORDER_STATE_DIR: state.path,
      HTORDER_LEDGER_URL: 'postgres://nobody@127.0.0.1:1/none',
      HTORDER_LEDGER_WAIT_MS: '300',
    };
    const r = await run('stats', env);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot reach the ledger database postgres:\/\/nobody@127\.0\.0\.1:1\/none/);
  });
});

describe('htorder ledger stats with an entry that cannot be read', () => {
  it('names the file on stderr and counts the others', async () => {
    const state = await tempDir();
    const file = new FolderLedger(state.path);
    await file.write(entry('PO-1'), { guard: null });
    await file.write(entry('PO-2'), { guard: null });
    let broken = '';
    const root = join(state.path, 'ledger');
    const orders = join(root, (await readdir(root))[0]!, 'orders');
    for (const shard of await readdir(orders))
      for (const name of await readdir(join(orders, shard)))
        if (name.startsWith('PO-2-') && name.endsWith('.json')) broken = join(orders, shard, name);
    await writeFile(broken, Buffer.alloc(4));
    const out = sink();
    const err = sink();
    const io = { stdout: out.stream, stderr: err.stream, env: { HTORDER_STATE_DIR: state.path }, cwd: process.cwd() };
    expect(await runLedgerStats({ json: true, flags: {} }, io)).toBe(0);
    expect(JSON.parse(out.text())).toMatchObject({ accounts: [{ account, entries: 1 }] });
    expect(err.text()).toContain(broken);
    expect(err.text()).toContain('not JSON');
  });
});
