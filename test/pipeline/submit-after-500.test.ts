import { systemClock } from '../../src/core/clock.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { JobCandidate } from '../../src/api/types.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { silentLogger } from '../../src/core/log/logger.js';
import { submitJob } from '../../src/pipeline/submit-job.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { usJob } from '../support/sandbox-http.js';

/**
 * A create answered 500 that the search proves was not made is checked with `validateOnly` for
 * the real messages. Only a refusal of the job there ends it as failed (exit 1, "fix the
 * manifest"): a 429 or refused credentials on that check is the API being unavailable, and the
 * job is sent again — under the chaos suite's faults, such a run exited 1 with nothing wrong.
 */

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox.close());
beforeEach(async () => {
  await sandbox.admin.reset();
  await sandbox.admin.clearFaults();
});

async function submitOnce(orderNumber: string) {
  const stateDir = await mkdtemp(join(tmpdir(), 'htorder-submit-500-'));
  const client = createApiClient(sandboxConfig(sandbox, 'us-demo', { stateDir }), {
    retry: { baseDelayMs: 1, maxDelayMs: 1 },
    sleep: async () => undefined,
  });
  try {
    return await submitJob(
      {
        client,
        ledger: new FolderLedger(stateDir),
        account: 'sandbox/us-demo',
        input: { file: 'orders.yaml', sha256: '0'.repeat(64) },
        logger: silentLogger(),
        clock: systemClock,
      },
      { orderNumber, hash: 'h', candidate: usJob({ orderNumber }) as JobCandidate },
    );
  } finally {
    await client.close();
  }
}

describe('a create answered 500 and not made', () => {
  it('is sent again when the validateOnly check meets a 429, not failed as if the job were wrong', async () => {
    await sandbox.admin.setFaults([
      { route: 'POST /Jobs', when: 'create', kind: 'status', status: 500, times: 1 },
      { route: 'POST /Jobs', when: 'validate', kind: 'status', status: 429, retryAfterSeconds: 0 },
    ]);
    const outcome = await submitOnce('PO-500-429');
    expect(outcome.status).toBe('submitted');
    expect((await sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['PO-500-429']);
  });
});
