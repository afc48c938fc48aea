import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { runApiCommand } from '../../src/cli/commands/api.js';
import { caught } from '../support/api-errors.js';
import { json, loopbackConfig, SECRET, startLoopback, tokenReply } from '../support/loopback-server.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { startSandboxProxy } from '../support/sandbox-proxy.js';
import { sink } from '../support/sink.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * A server that echoes the Authorization header, the token or the client secret must not get
 * them into errors.txt, result.json, result.csv, the terminal, or `htorder api`'s output.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await (cleanups.pop() as () => Promise<void>)();
});

describe('ApiError scrubs what the server echoes', () => {
  it('the live token and secret, Bearer credentials and secret-named keys never reach message, body or problem', async () => {
    let tokens = 0;
    const srv = await startLoopback((req, res) => {
      if (req.url.startsWith('/auth/')) return tokenReply(res, ++tokens);
      json(res, 400, {
        title: 'Bad request',
        detail: `you sent Authorization: ${req.headers.authorization} and the secret ${SECRET}`,
        errors: { items: [`token ${String(req.headers.authorization).slice(7)} is not allowed here`] },
        validationMessages: [
          { errorCode: 'E1', message: `"access_token":"${String(req.headers.authorization).slice(7)}"` },
        ],
        access_token: 'tok-1-abcdef',
        nested: { client_secret: SECRET, password: 'hunter2-password' },
      });
    });
    const client = createApiClient(loopbackConfig(srv.url));
    cleanups.push(
      () => srv.close(),
      () => client.close(),
    );
    const err = await caught(client.jobs.validate({ orderNumber: 'PO-1' } as never));
    const everything = [
      err.message,
      JSON.stringify(err.body),
      JSON.stringify(err.toProblem()),
      JSON.stringify(err.errors),
    ]
      .concat(JSON.stringify(err.validationMessages))
      .join('\n');
    for (const leaked of ['tok-1-abcdef', SECRET, 'hunter2-password']) expect(everything).not.toContain(leaked);
    expect(err.message).toContain('[redacted]');
    expect(err.detail).toContain('Authorization: [redacted]');
  });
});

describe('htorder api', () => {
  it('prints a response with secret-named keys and the live token scrubbed', async () => {
    let tokens = 0;
    const srv = await startLoopback((req, res) => {
      if (req.url.startsWith('/auth/')) return tokenReply(res, ++tokens);
      json(res, 200, {
        access_token: 'some-other-token-value',
        client_secret: 'echoed-secret-value',
        refreshToken: 'refresh-value-123',
        echo: `seen ${req.headers.authorization}`,
        id: 1001,
      });
    });
    cleanups.push(() => srv.close());
    const out = sink();
    const err = sink();
    const code = await runApiCommand(
      { flags: {}, method: 'get', path: '/account' },
      {
        stdout: out.stream,
        stderr: err.stream,
        env: {
          HTORDER_LOG_LEVEL: 'silent',
          HTORDER_BASE_URL: `${srv.url}/api`,
          HTORDER_AUTH_URL: `${srv.url}/auth`,
          HTORDER_REALM: 'test',
          HTORDER_CLIENT_ID: 'client-1',
          HTORDER_CLIENT_SECRET: SECRET,
          HTORDER_STATE_DIR: mkdtempSync(join(tmpdir(), 'htorder-state-')),
        },
        cwd: mkdtempSync(join(tmpdir(), 'htorder-api-')),
      },
    );
    expect(code).toBe(0);
    const text = out.text() + err.text();
    for (const leaked of ['some-other-token-value', 'echoed-secret-value', 'refresh-value-123', 'tok-1-abcdef', SECRET])
      expect(text).not.toContain(leaked);
    expect(JSON.parse(out.text()).id).toBe(1001);
  });
});

describe('htorder run against an API that echoes the Authorization header', () => {
  let h: PipelineHarness;
  let proxy: Awaited<ReturnType<typeof startSandboxProxy>>;
  const seenTokens = new Set<string>();
  beforeAll(async () => {
    h = await PipelineHarness.start();
    proxy = await startSandboxProxy(h, {
      answer: (x, res) => {
        const auth = String(x.headers.authorization ?? '');
        if (auth) seenTokens.add(auth.slice(7));
        if (!x.jobsPost) return false;
        // The dry run is refused with the caller's own credentials quoted back.
        json(res, 400, {
          title: `rejected for ${auth}`,
          detail: `client secret on file: ${h.env().HTORDER_CLIENT_SECRET}`,
          validationMessages: [{ errorCode: 'AUTH-ECHO', message: `token ${auth.slice(7)} lacks a scope` }],
        });
        return true;
      },
    });
  });
  afterAll(async () => {
    await proxy.close();
    await h.close();
  });
  beforeEach(async () => h.reset());

  it('no report and no terminal line carries the live token or the secret', async () => {
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-ECHO-1', items: ITEMS.reorder }]));
    const { stderr, stdout } = await h.cli('run', [file], { env: proxy.env() });
    expect(seenTokens.size).toBeGreaterThan(0);
    const written = [
      stderr,
      stdout,
      await readFile(`${file}.result.json`, 'utf8'),
      await readFile(`${file}.result.csv`, 'utf8'),
      await readFile(`${file}.errors.txt`, 'utf8'),
    ].join('\n');
    // The refusal itself is reported (it is the job's error) ...
    expect(written).toContain('AUTH-ECHO');
    // ... without the credentials it quoted.
    for (const token of seenTokens) expect(written).not.toContain(token);
    expect(written).not.toContain(h.env().HTORDER_CLIENT_SECRET);
  });
});
