import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { storeUnavailable } from '../../src/api/errors.js';
import { PgLedger } from '../../src/storage/ledger/pg-ledger.js';
import { PgDatabase } from '../../src/storage/pg/pg-database.js';
import { DIST, requireDist } from '../support/dist.js';
import { startLoginStall } from '../support/held-link.js';
import { pgClusterForFile } from '../support/pg-cluster.js';

/**
 * Whatever way a restart of the database breaks a statement — refused connections, a backend
 * terminated mid-statement or mid-transaction, a server shutting down or starting up — the
 * ledger says "the store is away" (StoreUnavailableError) and nothing else: any other error
 * would reach `run` as an internal error (exit 70) instead of an input to retry (exit 3).
 */

const cluster = await pgClusterForFile();
const account = 'https://api.us.example.com#1001';

describe.skipIf(!cluster)('a ledger database restarted under load', () => {
  it('fails every statement it cannot finish with StoreUnavailableError only', async () => {
    const url = await cluster!.createDatabase();
    const db = new PgDatabase({
      connection: cluster!.connection(url),
      name: url,
      waitMs: 300,
      poolSize: 6,
    });
    const ledger = new PgLedger(db, { leaseMs: 2000, waitMs: 2000 });
    const other: string[] = [];
    let away = 0;
    let done = 0;
    let stop = false;
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const key = { account, orderNumber: `PO-${w}-${i % 5}` };
        try {
          switch (i % 4) {
            case 0:
              await ledger.read(key);
              break;
            case 1:
              await ledger.write(
                {
                  ledgerVersion: 1,
                  ...key,
                  payloadHash: 'h',
                  state: 'intent',
                  attempts: 1,
                  intentAt: '2026-11-29T00:00:00.000Z',
                },
                { guard: null },
              );
              break;
            case 2:
              await ledger.updateNote<number>(account, `.n${w % 3}`, async (n) => {
                await sleep(5);
                return (n ?? 0) + 1;
              });
              break;
            default:
              await ledger.withLock(key, async () => ledger.read(key));
          }
          done++;
        } catch (err) {
          if (storeUnavailable(err) !== undefined) away++;
          else other.push(`${(err as Error).name} ${(err as { code?: string }).code ?? ''}: ${(err as Error).message}`);
          await sleep(20);
        }
      }
    };
    const workers = Array.from({ length: 12 }, (_, w) => worker(w));
    try {
      for (let r = 0; r < 3; r++) {
        await sleep(700);
        // Every backend cut mid-statement, as a failover's proxy or an administrator does.
        await cluster!.sql(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${cluster!.connection(url).database}' AND pid <> pg_backend_pid()`,
        );
        await sleep(300);
        await cluster!.stop();
        await sleep(800);
        await cluster!.start();
      }
      await sleep(700);
    } finally {
      stop = true;
      await Promise.all(workers);
      await cluster!.start();
      await db.close();
    }
    console.log({ done, away, other: other.length });
    expect(other).toEqual([]);
    expect(away).toBeGreaterThan(0);
  }, 120_000);

  it('survives a restart that ends a connection in the very answer that hands it out', async () => {
    // The server's "ready" and its shutdown's "terminating connection" reach a new connection of
    // a transaction together: the connection is handed out and has failed before its user can
    // listen for its errors. A process must not die of it (a watcher did, exit 1): the
    // transaction is tried again once the database is back.
    requireDist();
    const url = await cluster!.createDatabase();
    const stall = await startLoginStall(cluster!.port);
    const connection = { ...cluster!.connection(url), port: stall.port };
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { PgDatabase } from ${JSON.stringify(join(DIST, 'storage/pg/pg-database.js'))};
         const db = new PgDatabase({ connection: ${JSON.stringify(connection)}, name: 'test', waitMs: 20000 });
         const one = await db.transaction(async (q) => (await q.query('SELECT 1 AS one')).rows[0].one);
         process.stdout.write('answered ' + one);
         await db.close();`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await stall.stalled;
      await cluster!.stop();
      stall.release();
      await sleep(300);
      await cluster!.start();
      const code = await exited;
      expect(output).toBe('answered 1');
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await cluster!.start();
      await stall.close();
    }
  }, 60_000);
});
