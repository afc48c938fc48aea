import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { startArtworkServer } from '../support/artwork-server.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

let h: PipelineHarness;
let art: Awaited<ReturnType<typeof startArtworkServer>>;
beforeAll(async () => {
  h = await PipelineHarness.start({ fetchArtwork: true });
  art = await startArtworkServer();
});
afterAll(async () => {
  await art.close();
  await h.close();
});
beforeEach(async () => h.reset());

const print = (link: string) => `      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerReference: art
        externalArtworkUrl: "${link}"
        attributes: { Colors: 4 }
`;

async function statusOf(jobNumber: number): Promise<string | null | undefined> {
  const client = createApiClient(sandboxConfig(h.sandbox, 'us-demo', { stateDir: h.stateDir }));
  try {
    return (await client.jobs.get(jobNumber)).jobStatus;
  } finally {
    await client.close();
  }
}

describe('the sandbox fetches artwork as the printer does', () => {
  it('a job leaves Artwork Pending once its link answered with an image; a 404 keeps it waiting', async () => {
    const file = await h.write(
      'art.yaml',
      manifest([
        { orderNumber: 'GOOD-1', items: print(`${art.url}/good.png`) },
        { orderNumber: 'GONE-1', items: print(`${art.url}/missing.png`) },
      ]),
    );
    // Not checked here, so the 404 reaches the printer.
    const { code } = await h.cli('run', [file], { env: { HTORDER_ARTWORK_CHECK: 'off' } });
    expect(code).toBe(0);
    const [good, gone] = (await h.report(file)).jobs.map((j) => j.jobNumber as number);
    await waitFor(async () => ((await statusOf(good!)) === 'Received' ? true : undefined), 'GOOD-1 Received');
    await waitFor(
      () => (art.requests().some((r) => r.method === 'GET' && r.url === '/missing.png') ? true : undefined),
      'the printer fetched the missing link',
    );
    expect(await statusOf(gone!)).toBe('Artwork Pending');
  });
});
