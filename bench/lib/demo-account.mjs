// What the benchmarks need of the sandbox's us-demo account: its HTORDER_* environment (the
// project's own sandboxEnv) and asset tags that can be reordered.
import { tmpdir } from 'node:os';
import { createApiClient } from '../../dist/api/client.js';
import { sandboxConfig, sandboxEnv } from '../../dist/core/config/sandbox-config.js';

export { sandboxEnv };

/** A run's environment against the demo account: its HTORDER_* settings, `concurrency` calls at once, no log. */
export function demoRunEnv(sandbox, concurrency) {
  return {
    ...process.env,
    ...sandboxEnv(sandbox, 'us-demo'),
    HTORDER_CONCURRENCY: String(concurrency),
    HTORDER_LOG_LEVEL: 'silent',
  };
}

/** Tags of `n` orderable (non-archived, priced) assets of the demo account. */
export async function orderableAssets(sandbox, n) {
  const client = createApiClient(sandboxConfig(sandbox, 'us-demo', { stateDir: tmpdir() }));
  const tags = [];
  for await (const a of client.assets.iterate({ isArchived: false, priceCodeContains: 'DTF', pageSize: 100 })) {
    if (a.assetTag && a.priceCode && (a.priceBands?.[0]?.from ?? 1) <= 50) tags.push(a.assetTag);
    if (tags.length === n) break;
  }
  await client.close();
  return tags;
}
