import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { PNG } from '../support/artwork-server.js';
import { waitFor } from '../support/watch-harness.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { startTestS3, type TestS3 } from '../support/s3.js';
import { manifest } from '../support/yaml-manifests.js';

let h: PipelineHarness;
let s3: TestS3;
beforeAll(async () => {
  h = await PipelineHarness.start({ fetchArtwork: true });
  s3 = await startTestS3({ conditional: true });
});
afterAll(async () => {
  await s3.close();
  await h.close();
});
beforeEach(async () => h.reset());

const store = () => ({
  ...s3.env,
  HTORDER_ARTWORK_STORE: `s3://${s3.bucket}/art/`,
  HTORDER_ARTWORK_CHECK: 'on',
});
const puts = () => s3.requests.filter((r) => r.method === 'PUT' && r.path.includes('/art/')).length;

const print = (file: string) => `      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerReference: tiger
        artwork: ${file}
        attributes: { Colors: 4 }
`;

/** The artwork link a create request sent on its first line. */
const sentLink = (request: unknown): string | undefined =>
  (request as { items?: { externalArtworkUrl?: string }[] } | undefined)?.items?.[0]?.externalArtworkUrl;

async function design(name = 'designs/tiger.png', bytes: Buffer = PNG): Promise<void> {
  await mkdir(join(h.workDir, 'designs'), { recursive: true });
  await writeFile(join(h.workDir, name), bytes);
}

describe('artwork from a file', () => {
  it('plan says what run would upload and uploads nothing; run uploads once and sends a link the store answers', async () => {
    await design();
    const file = await h.write('tiger.yaml', manifest([{ orderNumber: 'TIGER-1', items: print('designs/tiger.png') }]));
    const before = puts();
    const planned = await h.cli('plan', [file], { env: store() });
    expect(planned.code).toBe(0);
    const warnings = (await h.report(file)).jobs[0]?.warnings.map((w) => w.code);
    expect(warnings).toEqual(['artwork.upload']);
    expect(puts()).toBe(before);

    expect((await h.cli('run', [file], { env: store() })).code).toBe(0);
    expect(puts()).toBe(before + 1);
    const [job] = await h.sandbox.admin.jobs();
    const link = sentLink(job?.request) ?? '';
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/htorder-test\/art\/[0-9a-f]{64}\.png\?.*X-Amz-Signature=/);
    const fetched = await fetch(link);
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(PNG)).toBe(true);
    // The sandbox, as the printer, fetched the link too: the job no longer waits for artwork.
    const client = createApiClient(sandboxConfig(h.sandbox, 'us-demo', { stateDir: h.stateDir }));
    try {
      const status = () => client.jobs.get(job?.jobNumber ?? 0).then((j) => j.jobStatus);
      await waitFor(async () => ((await status()) === 'Received' ? true : undefined), 'the job Received');
    } finally {
      await client.close();
    }
  });

  it('the same file in another order, and a re-run, upload nothing again', async () => {
    await design();
    const a = await h.write('a.yaml', manifest([{ orderNumber: 'SAME-A', items: print('designs/tiger.png') }]));
    const b = await h.write('b.yaml', manifest([{ orderNumber: 'SAME-B', items: print('./designs/tiger.png') }]));
    expect((await h.cli('run', [a], { env: store() })).code).toBe(0);
    const after = puts();
    expect((await h.cli('run', [b], { env: store() })).code).toBe(0);
    expect((await h.cli('run', [a, b], { env: store() })).code).toBe(0);
    expect(puts()).toBe(after);
    expect((await h.sandbox.admin.jobs()).length).toBe(2);
  });

  it('refuses a file outside the folder, a link out of it, a missing file and no store, each located, before anything is sent', async () => {
    await design();
    await writeFile(join(h.stateDir, 'secret.png'), PNG);
    await symlink(join(h.stateDir, 'secret.png'), join(h.workDir, 'designs', 'link.png'));
    const file = await h.write(
      'bad.yaml',
      manifest([
        { orderNumber: 'BAD-1', items: print('../secret.png') },
        { orderNumber: 'BAD-2', items: print('designs/link.png') },
        { orderNumber: 'BAD-3', items: print('designs/none.png') },
      ]),
    );
    const before = puts();
    const { code } = await h.cli('run', [file], { env: store() });
    expect(code).toBe(1);
    const report = await h.report(file);
    const problems = report.jobs.map((j) => [...j.errors, ...j.items.flatMap((i) => i.errors)].map((e) => e.code));
    expect(problems).toEqual([['artwork.outside'], ['artwork.file'], ['artwork.file']]);
    expect(JSON.stringify(report)).toContain('is a symbolic link');
    expect(puts()).toBe(before);
    expect(await h.sandbox.admin.jobs()).toEqual([]);

    const none = await h.write('none.yaml', manifest([{ orderNumber: 'NONE-1', items: print('designs/tiger.png') }]));
    expect((await h.cli('plan', [none])).code).toBe(1);
    expect((await h.report(none)).jobs[0]?.items[0]?.errors.map((e) => e.code)).toEqual(['artwork.no-store']);
  });

  it('a due date beyond a presigned link’s 7 days is refused at plan, pointing to the public base URL; with it, the link is public', async () => {
    await design();
    const far = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    const file = await h.write(
      'far.yaml',
      manifest([{ orderNumber: 'FAR-1', dateDue: far, items: print('designs/tiger.png') }]),
    );
    expect((await h.cli('plan', [file], { env: store() })).code).toBe(1);
    const error = (await h.report(file)).jobs[0]?.items[0]?.errors[0];
    expect(error?.code).toBe('artwork.lifetime');
    expect(error?.message).toContain('artworkPublicBaseUrl');
    const pub = {
      ...store(),
      HTORDER_ARTWORK_PUBLIC_BASE_URL: `${s3.endpoint}/${s3.bucket}`,
      HTORDER_ARTWORK_CHECK: 'off',
    };
    expect((await h.cli('run', [file], { env: pub })).code).toBe(0);
    const [job] = await h.sandbox.admin.jobs();
    const link = sentLink(job?.request);
    expect(link).toMatch(new RegExp(`^${s3.endpoint}/${s3.bucket}/art/[0-9a-f]{64}\\.png$`));
  });
});
