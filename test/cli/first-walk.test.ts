import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTrack } from '../../src/cli/commands/track.js';
import { runPipelineCommand } from '../../src/cli/run-pipeline.js';
import { UsageError } from '../../src/core/errors.js';
import { startLoopback } from '../support/loopback-server.js';
import { sink } from '../support/sink.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * A new user's first walk through the README's sandbox tour and its first mistakes: `run
 * --sandbox` then `track --sandbox`; no settings at all; an API host that is not there.
 */

/** The environment of this test without any HTORDER_* setting (its own XDG_STATE_HOME). */
function bareEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' };
  for (const k of Object.keys(env)) if (k.startsWith('HTORDER_')) delete env[k];
  return { ...env, HTORDER_LOG_LEVEL: 'silent', ...extra };
}

function io(cwd: string, env: Record<string, string | undefined>) {
  const out = sink();
  const err = sink();
  return { io: { stdout: out.stream, stderr: err.stream, env, cwd }, out, err };
}

describe('the sandbox tour', () => {
  it('track --sandbox follows the jobs run --sandbox submitted', async () => {
    const dir = await tempDirPerTest();
    const file = join(dir, 'orders.yaml');
    await writeFile(file, manifest('PO-TOUR', 2));
    const env = bareEnv();
    const run = io(dir, env);
    const code = await runPipelineCommand({ command: 'run', files: [file], flags: {}, sandbox: true }, run.io);
    expect(code, run.err.text()).toBe(0);

    const track = io(dir, env);
    expect(await runTrack([file], { sandbox: true, json: true }, track.io), track.err.text()).toBe(0);
    const result = JSON.parse(track.out.text()) as { jobs: { orderNumber: string; jobNumber: number }[] };
    expect(result.jobs.map((j) => j.orderNumber).sort()).toEqual(['PO-TOUR-1', 'PO-TOUR-2']);
    expect(result.jobs.every((j) => Number.isInteger(j.jobNumber))).toBe(true);
  });
});

describe('run tells a webhook of an invalid input', () => {
  it('with its first errors, not "see its reports"', async () => {
    const hook = await startLoopback((_req, res) => void res.end('ok'));
    try {
      const dir = await tempDirPerTest();
      const file = join(dir, 'orders.yaml');
      await writeFile(
        file,
        manifest([{ orderNumber: 'PO-BAD', items: '      - { itemType: Asset, code: A10001, quantity: -5 }\n' }]),
      );
      const env = bareEnv({ HTORDER_NOTIFY_URL: `${hook.url}/hook`, HTORDER_NOTIFY_FORMAT: 'json' });
      const run = io(dir, env);
      expect(await runPipelineCommand({ command: 'run', files: [file], flags: {}, sandbox: true }, run.io)).toBe(1);
      const body = JSON.parse(hook.seen[0]?.body ?? '{}') as { event: string; problem?: string };
      expect(body.event).toBe('failed');
      expect(body.problem).toMatch(/^1 error: orders\.yaml:\d+:\d+: jobs\[0\]\.items\[0\]\.quantity: /);
    } finally {
      await hook.close();
    }
  });
});

describe('no settings at all', () => {
  it('names every missing setting in one message, with the --sandbox hint', async () => {
    const dir = await tempDirPerTest();
    for (const call of [
      () => runTrack([], {}, io(dir, bareEnv()).io),
      () => runPipelineCommand({ command: 'plan', files: [join(dir, 'x.yaml')], flags: {} }, io(dir, bareEnv()).io),
    ]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UsageError);
      const message = (err as Error).message;
      for (const name of [
        'HTORDER_BASE_URL',
        'HTORDER_AUTH_URL',
        'HTORDER_REALM',
        'HTORDER_CLIENT_ID',
        'HTORDER_CLIENT_SECRET or HTORDER_CLIENT_SECRET_FILE',
      ])
        expect(message).toContain(name);
      expect(message).toMatch(/^missing configuration \(5 settings\):/);
      expect(message).toContain('add --sandbox');
    }
  });

  it('one missing setting keeps its one-line message, and the hint', async () => {
    const dir = await tempDirPerTest();
    const env = bareEnv({
      HTORDER_BASE_URL: 'https://api.example.com',
      HTORDER_AUTH_URL: 'https://auth.example.com',
      HTORDER_REALM: 'r',
      HTORDER_CLIENT_SECRET: 's',
    });
    const err = await runTrack([], {}, io(dir, env).io).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      'missing configuration: HTORDER_CLIENT_ID is not set (or use --client-id)\n' +
        'to try htorder without an account, add --sandbox (an in-process simulator with demo accounts)',
    );
  });
});

describe('an API host that is not there', () => {
  it('track names the host and the cause', async () => {
    const dir = await tempDirPerTest();
    const env = bareEnv({
      HTORDER_BASE_URL: 'http://127.0.0.1:9/us/api',
      HTORDER_AUTH_URL: 'http://127.0.0.1:9/us/auth',
      HTORDER_REALM: 'r',
      HTORDER_CLIENT_ID: 'c',
      HTORDER_CLIENT_SECRET: 's',
      HTORDER_ALLOW_INSECURE: '1',
      HTORDER_RETRY_MAX_MS: '1',
      HTORDER_RETRY_MIN_MS: '1',
    });
    const track = io(dir, env);
    expect(await runTrack([], {}, track.io)).toBe(3);
    expect(track.err.text()).toContain(
      'htorder track: cannot reach the API: POST /realms/r/protocol/openid-connect/token: 127.0.0.1:9 refused the connection (nothing listens there) (ECONNREFUSED)',
    );
    expect(track.err.text()).not.toContain('credentials were refused');
  });
});
