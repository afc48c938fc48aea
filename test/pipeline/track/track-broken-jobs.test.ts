import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runTrack } from '../../../src/cli/commands/track.js';
import type { ResultReport } from '../../../src/report/model.js';
import { PipelineHarness } from '../../support/pipeline-harness.js';
import { startSandboxProxy } from '../../support/sandbox-proxy.js';
import { sink } from '../../support/sink.js';
import { ITEMS, manifest } from '../../support/yaml-manifests.js';

/**
 * `htorder track` through a loopback proxy that breaks the answers it reads a job from: a
 * tracking list that is null, a job answer that is not a job. Track reports what it could
 * read, names the call that failed, and never crashes with a TypeError.
 */
let h: PipelineHarness;
let proxy: Awaited<ReturnType<typeof startSandboxProxy>>;
/** Rewrites an answer of the real sandbox (undefined: passed as it is). */
let rewrite: ((url: string, body: unknown) => { type: string; text: string } | undefined) | undefined;

beforeAll(async () => {
  h = await PipelineHarness.start();
  proxy = await startSandboxProxy(h, {
    reply: (x, sandbox, res) => {
      const answer =
        sandbox.ok && x.method === 'GET' && rewrite && sandbox.text
          ? rewrite(x.url, JSON.parse(sandbox.text))
          : undefined;
      if (!answer) return false;
      res.writeHead(200, { 'content-type': answer.type }).end(answer.text);
      return true;
    },
  });
});
afterAll(async () => {
  await proxy.close();
  await h.close();
});
beforeEach(async () => {
  rewrite = undefined;
  await h.reset();
});

const isJob = (url: string): boolean => /\/Jobs\/\d+(\?|$)/.test(url);
const asJson = (body: unknown) => ({ type: 'application/json', text: JSON.stringify(body) });

async function trackVia(file: string, opts: Record<string, unknown> = {}) {
  const err = sink();
  const env = { ...h.env(), ...proxy.env() };
  const code = await runTrack([file], opts, { stdout: sink().stream, stderr: err.stream, env, cwd: h.workDir });
  const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8')) as ResultReport;
  return { code, stderr: err.text(), job: report.jobs[0] };
}

async function submitted(): Promise<string> {
  const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-TJ1', items: ITEMS.reorder }]));
  expect((await h.cli('run', [file], { env: proxy.env() })).code).toBe(0);
  return file;
}

describe('htorder track against broken job answers', () => {
  it('an active job whose tracking is null: tracked, with no tracking numbers', async () => {
    const file = await submitted();
    rewrite = (url, body) => {
      if (!url.includes('/Jobs/active')) return undefined;
      const envelope = body as { items: { tracking: unknown }[] };
      for (const job of envelope.items) job.tracking = null;
      return asJson(envelope);
    };
    const { code, stderr, job } = await trackVia(file);
    expect(stderr).not.toContain('TypeError');
    expect(code).toBe(0);
    expect(job?.tracking).toMatchObject({ status: 'Received', tracking: [] });
  });

  it.each([
    ['an HTML page', () => ({ type: 'text/html', text: '<html>maintenance</html>' })],
    [
      'a job whose shippingAddresses is null',
      (body: unknown) => asJson({ ...(body as object), shippingAddresses: null }),
    ],
    ['another job', (body: unknown) => asJson({ ...(body as object), jobNumber: 1 })],
  ])('a job answer that is %s: the job could not be read, the call named, no TypeError', async (_name, broken) => {
    const file = await submitted();
    rewrite = (url, body) => (isJob(url) ? broken(body) : undefined);
    const { code, stderr, job } = await trackVia(file, { details: true });
    expect(stderr).not.toContain('TypeError');
    expect(code).toBe(3);
    expect(job?.tracking?.problem).toContain('GET /Jobs/');
  });
});
