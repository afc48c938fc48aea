import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runApiCommand, type ApiCommandInput } from '../../src/cli/commands/api.js';
import { UsageError } from '../../src/core/errors.js';
import { runCli } from '../../src/cli/program.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startLoopback } from '../support/loopback-server.js';

function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

async function run(
  input: Partial<ApiCommandInput> & { method: string; path: string },
  env: Record<string, string | undefined> = {},
) {
  const out = sink();
  const err = sink();
  const code = await runApiCommand(
    { flags: {}, ...input },
    {
      stdout: out.stream,
      stderr: err.stream,
      env: { HTORDER_LOG_LEVEL: 'silent', ...env },
      cwd: mkdtempSync(join(tmpdir(), 'htorder-api-')),
    },
  );
  return { code, stdout: out.text(), stderr: err.text() };
}

let sandbox: Sandbox;
let sandboxEnv: Record<string, string>;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  const us = sandbox.regions.us;
  const acct = sandbox.accounts.find((a) => a.name === 'us-demo')!;
  sandboxEnv = {
    HTORDER_BASE_URL: us.baseUrl,
    HTORDER_AUTH_URL: us.authUrl,
    HTORDER_REALM: us.realm,
    HTORDER_CLIENT_ID: acct.clientId,
    HTORDER_CLIENT_SECRET: acct.clientSecret,
  };
});
afterAll(async () => {
  await sandbox.close();
});

describe('htorder api with --sandbox', () => {
  it('prints the response JSON and exits 0', async () => {
    const r = await run({ method: 'get', path: '/account', sandbox: true });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).id).toBe(1001);
    expect(r.stderr).toBe('');
  });

  it('passes the query string and percent-encodes a raw price code', async () => {
    const active = await run({ method: 'GET', path: '/Jobs/active?pageSize=2', sandbox: true });
    expect(JSON.parse(active.stdout).pageSize).toBe(2);
    const pc = await run({ method: 'GET', path: '/PriceCodes/DTF Full Color 10" x 10"', sandbox: true });
    expect(pc.code).toBe(0);
    expect(JSON.parse(pc.stdout).priceCode).toBe('DTF Full Color 10" x 10"');
  });

  it('a 404 prints problem details on stderr and exits 1', async () => {
    const r = await run({ method: 'GET', path: '/Jobs/99999999', sandbox: true });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr).status).toBe(404);
  });

  it('--account picks a demo account (an ordinary user gets 403 → exit 1)', async () => {
    const r = await run({ method: 'GET', path: '/account/users', sandbox: true, account: 'us-demo-user' });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr).status).toBe(403);
    const nz = await run({ method: 'GET', path: '/account', sandbox: true, account: 'nz-demo' });
    expect(JSON.parse(nz.stdout).id).toBe(2001);
  });

  it('sends --data as the JSON body (validateOnly creates nothing)', async () => {
    const body = {
      orderNumber: 'CLI-1',
      dateDue: '2030-06-14',
      deliveryAddress: { deliveryMethod: 'PICKUP' },
      items: [{ itemType: 'Asset', code: 'A10001', quantity: 20 }],
      validateOnly: true,
    };
    const r = await run({ method: 'POST', path: '/Jobs', sandbox: true, data: JSON.stringify(body) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Validated');
  });
});

describe('htorder api with configured credentials', () => {
  it('exits 0 against a configured account', async () => {
    const r = await run({ method: 'GET', path: '/Lookups/job-statuses' }, sandboxEnv);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).map((s: { name: string }) => s.name)).toContain('Received');
  });

  it('exits 3 when the credentials are refused, without echoing the secret', async () => {
    const r = await run(
      { method: 'GET', path: '/account' },
      { ...sandboxEnv, HTORDER_CLIENT_SECRET: 'wrong-secret-XYZ' },
    );
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('refused');
    expect(r.stderr).not.toContain('wrong-secret-XYZ');
  });

  it('exits 3 when the API cannot be reached', async () => {
    const dead = await startLoopback(() => undefined);
    await dead.close();
    const r = await run(
      { method: 'GET', path: '/account' },
      { ...sandboxEnv, HTORDER_BASE_URL: `${dead.url}/api`, HTORDER_AUTH_URL: `${dead.url}/auth` },
    );
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('ECONNREFUSED');
  });

  it('reads --data @FILE', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'htorder-data-'));
    writeFileSync(join(dir, 'patch.json'), '{"description":"x"}');
    const out = sink();
    const err = sink();
    const code = await runApiCommand(
      { method: 'PATCH', path: '/Jobs/99999999', data: '@patch.json', flags: {} },
      { stdout: out.stream, stderr: err.stream, env: { ...sandboxEnv, HTORDER_LOG_LEVEL: 'silent' }, cwd: dir },
    );
    expect(code).toBe(1); // the job does not exist: 404, but the body was read and sent
    expect(JSON.parse(err.text()).status).toBe(404);
  });
});

describe('usage errors (exit 2)', () => {
  it.each([
    [{ method: 'FETCH', path: '/account' }, 'unknown method'],
    [{ method: 'GET', path: 'account' }, 'must start with "/"'],
    [{ method: 'POST', path: '/Jobs', data: '{not json' }, 'not valid JSON'],
    [{ method: 'GET', path: '/account', data: '{}' }, 'GET'],
    [{ method: 'GET', path: '/account', account: 'nz-demo' }, '--account needs --sandbox'],
    [{ method: 'GET', path: '/account', sandbox: true, flags: { baseUrl: 'https://x.example.com' } }, '--base-url'],
    [{ method: 'GET', path: '/account', sandbox: true, account: 'mars-demo' }, 'unknown sandbox account'],
  ] as [Partial<ApiCommandInput> & { method: string; path: string }, string][])('%o', async (input, text) => {
    await expect(run(input, sandboxEnv)).rejects.toThrow(UsageError);
    await expect(run(input, sandboxEnv)).rejects.toThrow(text);
  });

  it('through the CLI: missing configuration exits 2 and names the variable', async () => {
    const saved = { ...process.env };
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    try {
      for (const k of Object.keys(process.env)) if (k.startsWith('HTORDER_')) delete process.env[k];
      process.env.HTORDER_AUTH_URL = 'https://auth.example.com';
      expect(await runCli(['api', 'GET', '/account'])).toBe(2);
      expect(writes.join('')).toContain('HTORDER_BASE_URL');
    } finally {
      spy.mockRestore();
      process.env = saved;
    }
  });
});

afterEach(() => {
  process.exitCode = undefined;
});
