import { chown, link, mkdir, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { runApply } from '../../src/cli/saved-plan-command.js';
import type { SavedPlan } from '../../src/pipeline/saved-plan.js';
import { sink } from '../support/sink.js';
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

/** `htorder apply PLAN` in-process, with the store's settings. */
async function apply(plan: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await runApply(
    { plan, flags: {}, tolerance: 0, maxAgeHours: 24, json: false },
    { stdout: out.stream, stderr: err.stream, env: { ...h.env(), ...env }, cwd: h.workDir },
  );
  return { code, stderr: err.text() };
}

describe('artwork files: hard links, saved plans, and what one input may cost', () => {
  it.runIf(process.getuid?.() === 0)(
    "a hard link to another user's private file is refused on its line, saying why; nothing is uploaded or sent",
    async () => {
      await mkdir(join(h.workDir, 'designs'), { recursive: true });
      const secret = join(h.stateDir, 'runner-config.png');
      await writeFile(secret, 'clientSecret: hunter2', { mode: 0o600 });
      await chown(secret, 4242, 4242);
      await link(secret, join(h.workDir, 'designs', 'tiger.png'));
      const file = await h.write('hl.yaml', manifest([{ orderNumber: 'HL-1', items: print('designs/tiger.png') }]));
      const before = puts();
      expect((await h.cli('run', [file], { env: store() })).code).toBe(1);
      const [error] = (await h.report(file)).jobs[0]?.items[0]?.errors ?? [];
      expect(error?.code).toBe('artwork.file');
      expect(error?.message).toMatch(/designs\/tiger\.png has 2 hard links and belongs to another user/);
      expect(puts()).toBe(before);
      expect(await h.sandbox.admin.jobs()).toEqual([]);
    },
  );

  it('apply sends a plan whose artwork link is presigned anew, and refuses one whose artwork changed', async () => {
    await design();
    const file = await h.write('sp.yaml', manifest([{ orderNumber: 'SP-1', items: print('designs/tiger.png') }]));
    const planFile = join(h.workDir, 'plan.json');
    const env = { ...store(), HTORDER_ARTWORK_CHECK: 'off' };
    expect((await h.cli('plan', [file], { out: planFile, env })).code).toBe(0);
    const planned = JSON.parse(await readFile(planFile, 'utf8')) as SavedPlan;
    expect(JSON.stringify(planned)).not.toContain('X-Amz');
    // A presigned link names the second it was made: apply makes another.
    const second = Math.floor(Date.now() / 1000);
    await waitFor(() => (Math.floor(Date.now() / 1000) > second ? true : undefined), 'the next second');
    const applied = await apply(planFile, env);
    expect(applied.stderr).not.toContain('differs from the plan');
    expect(applied.code).toBe(0);
    const [job] = await h.sandbox.admin.jobs();
    expect(sentLink(job?.request)).toMatch(/X-Amz-Signature=/);

    // Other artwork under the same name is another request: nothing sent.
    const other = await h.write('sp2.yaml', manifest([{ orderNumber: 'SP-2', items: print('designs/lion.png') }]));
    await design('designs/lion.png');
    const plan2 = join(h.workDir, 'plan2.json');
    expect((await h.cli('plan', [other], { out: plan2, env })).code).toBe(0);
    await design('designs/lion.png', Buffer.concat([PNG, Buffer.from('changed')]));
    const refused = await apply(plan2, env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('differs from the plan');
    expect((await h.sandbox.admin.jobs()).length).toBe(1);
  });

  it('one file named by every line counts once; distinct files past artworkMaxInputBytes are refused on their line', async () => {
    await design();
    // A 3 MiB sparse file, named by 40 lines (twice spelt differently), and two more files.
    await truncate(join(h.workDir, 'designs', 'tiger.png'), 3 * 1024 * 1024);
    await design('designs/lion.png', Buffer.concat([PNG, Buffer.alloc(1200 * 1024)]));
    await design('designs/bear.png', Buffer.concat([PNG, Buffer.alloc(100)]));
    const jobs = Array.from({ length: 40 }, (_, i) => ({
      orderNumber: `MANY-${i + 1}`,
      items: print(i % 2 ? 'designs/tiger.png' : './designs/tiger.png'),
    }));
    const many = await h.write('many.yaml', manifest(jobs));
    const env = { ...store(), HTORDER_ARTWORK_CHECK: 'off', HTORDER_ARTWORK_MAX_INPUT_BYTES: String(4 * 1024 * 1024) };
    expect((await h.cli('plan', [many], { env })).code).toBe(0);
    const report = await h.report(many);
    expect(report.jobs.every((j) => j.status === 'valid')).toBe(true);

    // tiger (3 MiB) + lion (1.2 MiB) pass 4 MiB: lion is refused, tiger and bear are not.
    const three = await h.write(
      'three.yaml',
      manifest([
        { orderNumber: 'CAP-1', items: print('designs/tiger.png') },
        { orderNumber: 'CAP-2', items: print('designs/tiger.png') },
        { orderNumber: 'CAP-3', items: print('designs/bear.png') },
      ]),
    );
    await h.write(
      'three.yaml',
      (await readFile(three, 'utf8')) +
        manifest([{ orderNumber: 'CAP-4', items: print('designs/lion.png') }]).replace('version: 1\njobs:\n', ''),
    );
    expect((await h.cli('plan', [three], { env })).code).toBe(1);
    const jobsOf = (await h.report(three)).jobs;
    expect(jobsOf.slice(0, 3).map((j) => j.items[0]?.errors ?? [])).toEqual([[], [], []]);
    const [capped] = jobsOf[3]?.items[0]?.errors ?? [];
    expect(capped?.code).toBe('artwork.file');
    expect(capped?.message).toContain('over the 4194304-byte limit (setting artworkMaxInputBytes)');
  });
});
