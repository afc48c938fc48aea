import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineCommand } from '../../../src/cli/run-pipeline.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { startLoopback } from '../../support/loopback-server.js';
import { sink } from '../../support/sink.js';
import { tempDir } from '../../support/temp-files.js';
import { sandboxWithEnv } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

let sandbox: Sandbox;
let env: Record<string, string>;
let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir('htorder-run-notify-');
  ({ sandbox, env } = await sandboxWithEnv(join(dir.path, 'state')));
});
afterAll(async () => {
  await sandbox.close();
  await dir.remove();
});

describe('htorder run notifies too (the nightly cron job)', () => {
  it('tells the webhook of the input that failed, not of the one that was done, before it exits', async () => {
    const hook = await startLoopback((_req, res) => {
      res.end('ok');
    });
    try {
      await writeFile(join(dir.path, 'good.yaml'), manifest('RN', 1));
      await writeFile(join(dir.path, 'bad.yaml'), 'version: 1\njobs: [ {');
      const stderr = sink();
      const code = await runPipelineCommand(
        { command: 'run', files: [join(dir.path, 'good.yaml'), join(dir.path, 'bad.yaml')], flags: {} },
        {
          stdout: sink().stream,
          stderr: stderr.stream,
          env: { ...env, HTORDER_NOTIFY_URL: `${hook.url}/hook`, HTORDER_LOG_LEVEL: 'info' },
          cwd: dir.path,
        },
      );
      expect(code, stderr.text()).toBe(1);
      // Delivered before runPipelineCommand returned: the run waits (bounded) for its notifications.
      const bodies = hook.seen.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toMatchObject({
        event: 'failed',
        input: { name: 'bad.yaml', location: join(dir.path, 'bad.yaml') },
      });
      // Its first errors, as its errors.txt has them, not "see its reports".
      expect(bodies[0]?.problem).toMatch(/^2 errors: bad\.yaml:2:10: Flow map in block collection /);
      expect(String(bodies[0]?.origin)).toMatch(/^htorder run on /);
    } finally {
      await hook.close();
    }
  });

  it('tells the webhook why an input waits for approval (exit 4): its reasons, not "see its reports"', async () => {
    const hook = await startLoopback((_req, res) => {
      res.end('ok');
    });
    try {
      await writeFile(join(dir.path, 'big.yaml'), manifest('RH', 1));
      const stderr = sink();
      const code = await runPipelineCommand(
        { command: 'run', files: [join(dir.path, 'big.yaml')], flags: {} },
        {
          stdout: sink().stream,
          stderr: stderr.stream,
          env: { ...env, HTORDER_NOTIFY_URL: `${hook.url}/hook`, HTORDER_MAX_JOB_COST: '1' },
          cwd: dir.path,
        },
      );
      expect(code, stderr.text()).toBe(4);
      const bodies = hook.seen.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      expect(bodies).toEqual([
        expect.objectContaining({ event: 'awaiting-approval', title: '1 job awaiting approval' }),
      ]);
      expect(bodies[0]?.problem).toMatch(
        /^1 reason: big\.yaml:\d+:\d+: jobs\[0\]: awaiting approval: estimate [\d,.]+ USD is over maxJobCost 1\.00 USD/,
      );
    } finally {
      await hook.close();
    }
  });

  it('an API it cannot reach is told once, however many inputs were turned away', async () => {
    const hook = await startLoopback((_req, res) => {
      res.end('ok');
    });
    await sandbox.admin.setFaults([{ route: '*', kind: 'status', status: 503, retryAfterSeconds: 0 }]);
    try {
      await writeFile(join(dir.path, 'one.yaml'), manifest('RU', 1));
      await writeFile(join(dir.path, 'two.yaml'), manifest('RV', 1));
      const code = await runPipelineCommand(
        { command: 'run', files: [join(dir.path, 'one.yaml'), join(dir.path, 'two.yaml')], flags: {} },
        {
          stdout: sink().stream,
          stderr: sink().stream,
          env: { ...env, HTORDER_NOTIFY_URL: `${hook.url}/hook` },
          cwd: dir.path,
        },
      );
      expect(code).toBe(3);
      const bodies = hook.seen.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      expect(bodies.map((b) => [b.event, b.title])).toEqual([['api-unavailable', 'API unavailable']]);
    } finally {
      await sandbox.admin.setFaults([]);
      await hook.close();
    }
  });
});
