import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runTrack } from '../../../src/cli/commands/track.js';
import { PipelineHarness } from '../../support/pipeline-harness.js';
import { startSandboxProxy } from '../../support/sandbox-proxy.js';
import { sink } from '../../support/sink.js';
import { ITEMS, manifest } from '../../support/yaml-manifests.js';

/**
 * `htorder track` through a loopback proxy whose GET /Jobs/active always says there is another
 * page and always answers the same one (a server that ignores `page`): track stops after one
 * repeat with an error naming the call, instead of asking for pages without end.
 */
let h: PipelineHarness;
let proxy: Awaited<ReturnType<typeof startSandboxProxy>>;
let stuck = false;
let pagesAsked = 0;
/** Past this many pages the proxy lets the listing end, so a client without a guard still returns. */
const SAFETY = 30;

beforeAll(async () => {
  h = await PipelineHarness.start();
  proxy = await startSandboxProxy(h, {
    reply: (x, sandbox, res) => {
      if (!stuck || !x.url.includes('/Jobs/active') || !sandbox.ok) return false;
      pagesAsked++;
      const envelope = JSON.parse(sandbox.text) as { items: { jobNumber: number; orderNumber: string | null }[] };
      const other = { ...envelope.items[0], jobNumber: 1, orderNumber: 'SOMEONE-ELSE' };
      const more = pagesAsked < SAFETY;
      const page = { ...envelope, items: [other], pageNumber: 1, totalPages: 5, hasNextPage: more };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page));
      return true;
    },
  });
});
afterAll(async () => {
  await proxy.close();
  await h.close();
});
beforeEach(async () => {
  stuck = false;
  pagesAsked = 0;
  await h.reset();
});

describe('htorder track against a job listing whose pages do not move', () => {
  it('asks for two pages, then fails naming GET /Jobs/active (unavailable, exit 3)', async () => {
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-T1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file], { env: proxy.env() })).code).toBe(0);
    stuck = true;
    const err = sink();
    const code = await runTrack(
      [file],
      {},
      { stdout: sink().stream, stderr: err.stream, env: { ...h.env(), ...proxy.env() }, cwd: h.workDir },
    );
    expect(pagesAsked).toBe(2);
    expect(code).toBe(3);
    expect(err.text()).toContain('GET /Jobs/active');
    expect(err.text()).toContain('do not move');
  });
});
