import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { requestSandboxStop } from '../../src/cli/commands/sandbox.js';

/** Captures process.stdout while `htorder sandbox` runs in-process. */
function captureStdout(): { lines: () => string[]; restore: () => void } {
  const original = process.stdout.write.bind(process.stdout);
  let buf = '';
  process.stdout.write = ((chunk: string | Uint8Array) => {
    buf += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  }) as typeof process.stdout.write;
  return { lines: () => buf.split('\n').filter(Boolean), restore: () => (process.stdout.write = original) };
}

async function waitFor<T>(fn: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('timed out waiting');
}

afterEach(() => {
  requestSandboxStop();
  process.exitCode = undefined;
});

describe('htorder sandbox', () => {
  it('prints exactly one JSON ready line, serves, and exits 0 when stopped', async () => {
    const cap = captureStdout();
    let running: Promise<number>;
    let line: string;
    try {
      running = runCli(['sandbox', '--port', '0', '--seed', '3', '--token-ttl', '60']);
      line = await waitFor(() => cap.lines()[0]);
    } finally {
      cap.restore();
    }
    const ready = JSON.parse(line);
    expect(Object.keys(ready)).toEqual(['url', 'adminUrl', 'regions', 'accounts']);
    expect(ready.regions.us).toMatchObject({
      baseUrl: `${ready.url}/us/api`,
      authUrl: `${ready.url}/us/auth`,
      realm: 'htorder-us',
    });
    expect(ready.accounts[0]).toMatchObject({ name: 'us-demo', region: 'us', clientId: 'us-demo' });
    const acct = ready.accounts[0];
    const tok = await fetch(`${ready.regions.us.authUrl}/realms/htorder-us/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: acct.clientId,
        client_secret: acct.clientSecret,
      }),
    });
    const t = (await tok.json()) as { expires_in: number };
    expect(t.expires_in).toBe(60);
    expect(requestSandboxStop()).toBe(true);
    expect(await running!).toBe(0);
    expect(cap.lines()).toHaveLength(1);
    await expect(fetch(`${ready.url}/us/status/status.json`)).rejects.toThrow();
  });

  it('exits 2 on a bad flag value', async () => {
    expect(await runCli(['sandbox', '--port', 'eighty'])).toBe(2);
    expect(await runCli(['sandbox', '--token-ttl', '0'])).toBe(2);
  });
});
