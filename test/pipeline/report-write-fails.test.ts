import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { startSandboxProxy } from '../support/sandbox-proxy.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * `htorder run` whose reports cannot be written once its orders were sent: a folder appears at
 * result.json's name when the create reaches the API (through a loopback proxy in front of the
 * sandbox), so the report's rename fails for real (EISDIR, as root too). The run says which
 * report and why, that the orders are in the ledger, and exits 3; run again, it writes the
 * reports and sends nothing twice.
 */
let h: PipelineHarness;
let proxy: Awaited<ReturnType<typeof startSandboxProxy>>;
/** The folder made at the first create, if any. */
let blockAt: string | undefined;

beforeAll(async () => {
  h = await PipelineHarness.start();
  proxy = await startSandboxProxy(h, {
    send: (x) => {
      if (x.jobsPost?.validateOnly === false && blockAt !== undefined) mkdirSync(blockAt, { recursive: true });
      return x.body;
    },
  });
});
afterAll(async () => {
  await proxy.close();
  await h.close();
});
beforeEach(async () => {
  blockAt = undefined;
  await h.reset();
});

describe('htorder run: reports that cannot be written after sending', () => {
  it('names the report and the cause, says the orders are recorded, exits 3; the next run writes them and sends nothing', async () => {
    const file = await h.write('orders.yaml', manifest([{ orderNumber: 'PO-REPORT-1', items: ITEMS.reorder }]));
    blockAt = `${file}.result.json`;
    const first = await h.cli('run', [file], { env: proxy.env() });
    expect(first.stderr + first.stdout).toContain(`${file}.result.json`);
    expect(first.stderr + first.stdout).toContain('EISDIR');
    expect(first.stderr + first.stdout).toMatch(/recorded in the ledger/);
    expect(first.stderr + first.stdout).not.toMatch(/internal error|\n\s+at /);
    expect(first.code).toBe(3);
    expect(await h.sandbox.admin.jobs()).toHaveLength(1);

    blockAt = undefined;
    await rm(`${file}.result.json`, { recursive: true });
    const again = await h.cli('run', [file], { env: proxy.env() });
    expect(again.code, again.stderr).toBe(0);
    expect(await h.sandbox.admin.jobs()).toHaveLength(1);
    expect((await h.report(file)).jobs[0]).toMatchObject({ status: 'already-submitted' });
  });
});
