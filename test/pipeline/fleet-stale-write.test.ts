import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { JobCandidate } from '../../src/api/types.js';
import { systemClock } from '../../src/core/clock.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { silentLogger } from '../../src/core/log/logger.js';
import { submitJob } from '../../src/pipeline/submit-job.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { LockLostError } from '../../src/storage/ledger/model.js';
import { PgLedger } from '../../src/storage/ledger/pg-ledger.js';
import { PgDatabase } from '../../src/storage/pg/pg-database.js';
import { startHeldLink } from '../support/held-link.js';
import { pgClusterForFile } from '../support/pg-cluster.js';
import { usJob } from '../support/sandbox-http.js';

/**
 * Two hosts of a fleet submit one order. Host A's statements stall on the way to the ledger
 * database (as they do while it restarts) after its create was refused, past its lock's lease;
 * host B takes the order over, settles A's intent and creates the order. A's late ledger writes
 * must then change nothing: the order stays `submitted`, not set back to `intent` (in doubt,
 * with its input already finished by B) or `failed` (which a later run would send again).
 */

const cluster = await pgClusterForFile();
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox?.close());

describe.skipIf(!cluster)('a fleet host whose ledger writes arrive after its order lock ran out', () => {
  it('leaves the order as the host that took it over recorded it, and sends nothing more', async () => {
    const url = await cluster!.createDatabase();
    const link = await startHeldLink(cluster!.port);
    const databases: PgDatabase[] = [];
    const host = async (port: number) => {
      const db = new PgDatabase({ connection: { ...cluster!.connection(url), port }, name: url, waitMs: 20_000 });
      databases.push(db);
      const stateDir = await mkdtemp(join(tmpdir(), 'htorder-stale-write-'));
      const client = createApiClient(sandboxConfig(sandbox, 'us-demo', { stateDir }), {
        retry: { baseDelayMs: 1, maxDelayMs: 1 },
      });
      const ledger = new PgLedger(db, { leaseMs: 600 });
      const ctx = {
        client,
        ledger,
        account: 'sandbox/us-demo',
        input: { file: 'orders.yaml', sha256: '0'.repeat(64) },
        logger: silentLogger(),
        clock: systemClock,
      };
      return { ctx, ledger, close: () => client.close() };
    };
    const hostA = await host(link.port);
    const hostB = await host(cluster!.port);
    const orderNumber = 'PO-STALE-1';
    const key = { account: 'sandbox/us-demo', orderNumber };
    const req = { orderNumber, hash: 'h', candidate: usJob({ orderNumber }) as JobCandidate };
    try {
      // A's create is answered 503 after a while: nothing is made, and A settles it by search.
      await sandbox.admin.setFaults([
        { route: 'POST /Jobs', when: 'create', kind: 'latency', latencyMs: 800, times: 1 },
        { route: 'POST /Jobs', when: 'create', kind: 'status', status: 503, retryAfterSeconds: 0, times: 1 },
      ]);
      const a = submitJob(hostA.ctx, req).then(
        (outcome) => outcome,
        (err: unknown) => err,
      );
      // A's intent is in the database and its create on the wire: from now on A's statements stall.
      while ((await hostB.ledger.read(key))?.state !== 'intent') await sleep(5);
      link.hold();
      // B waits for A's lock to run out, settles A's intent by search (nothing), and creates it.
      const b = await submitJob(hostB.ctx, req);
      expect(b.status).toBe('submitted');
      link.release();
      const late = await a;
      const entry = await hostB.ledger.read(key);
      expect(entry).toMatchObject({ state: 'submitted', jobNumber: b.entry?.jobNumber });
      expect(late).toBeInstanceOf(LockLostError);
      expect((await sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual([orderNumber]);
      // The next run of the order finds it submitted and sends nothing.
      expect((await submitJob(hostB.ctx, req)).status).toBe('already-submitted');
      expect(await sandbox.admin.jobs()).toHaveLength(1);
    } finally {
      link.release();
      await sandbox.admin.clearFaults();
      await Promise.all([hostA.close(), hostB.close()]);
      for (const db of databases) await db.close();
      await link.close();
    }
  }, 30_000);
});
