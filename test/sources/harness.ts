import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runWatch, type WatchInput } from '../../src/app/watch-daemon.js';

/** A sandbox in the test process and HTORDER_* env pointing at its us-demo account. */
export async function sandboxWithEnv(stateDir: string): Promise<{ sandbox: Sandbox; env: Record<string, string> }> {
  const sandbox = await startSandbox({ port: 0 });
  const region = sandbox.regions.us!;
  const account = sandbox.accounts.find((a) => a.name === 'us-demo')!;
  return {
    sandbox,
    env: {
      HTORDER_BASE_URL: region.baseUrl,
      HTORDER_AUTH_URL: region.authUrl,
      HTORDER_REALM: region.realm,
      HTORDER_CLIENT_ID: account.clientId,
      HTORDER_CLIENT_SECRET: account.clientSecret,
      HTORDER_STATE_DIR: stateDir,
    },
  };
}

export interface RunningWatch {
  stop(): Promise<number>;
  /** Log lines (JSON) written so far. */
  logs(): Record<string, unknown>[];
  healthUrl?: string;
}

/** `htorder watch` in-process (the same runWatch the CLI calls), stopped like SIGTERM. */
export async function startWatch(input: Partial<WatchInput> & { target: string }, env: Record<string, string>): Promise<RunningWatch> {
  const controller = new AbortController();
  const lines: string[] = [];
  const stderr = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  let healthUrl: string | undefined;
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  const done = runWatch(
    { flags: {}, scanIntervalMs: 100, stableMs: 150, retryMinMs: 200, retryMaxMs: 400, ...input },
    {
      stderr,
      env: { ...env },
      cwd: process.cwd(),
      signal: controller.signal,
      onReady: (info) => {
        healthUrl = info.healthUrl;
        ready();
      },
    },
  );
  await Promise.race([readyP, done.then((code) => Promise.reject(new Error(`watch ended early with ${code}: ${lines.join('\n')}`)))]);
  return {
    healthUrl,
    stop: async () => {
      controller.abort();
      return done;
    },
    logs: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Polls until `check` returns a value other than undefined (tests wait for effects, never for fixed times). */
export async function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A manifest of `n` asset reorders with order numbers `${prefix}-1…n`. */
export function manifest(prefix: string, n = 1): string {
  const jobs = Array.from({ length: n }, (_, i) => `  - orderNumber: ${prefix}-${i + 1}
    deliveryAddress:
      deliveryMethod: UPSGND
      contactName: Ana Ruiz
      streetAddress: 1 Main St
      city: Austin
      state: TX
      postalCode: "78701"
      countryCodeISO2: US
    items:
      - { itemType: Asset, code: A10001, quantity: 50 }
`).join('');
  return `version: 1\njobs:\n${jobs}`;
}
