import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { sandboxEnv } from '../../src/core/config/sandbox-config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runWatch, type WatchInput } from '../../src/app/watch-daemon.js';
import type { WatchEvent } from '../../src/watch/events.js';
import { sink } from './sink.js';
import { tempDir } from './temp-files.js';

type TempDir = Awaited<ReturnType<typeof tempDir>>;

export interface WatchFixture {
  sandbox: Sandbox;
  /** HTORDER_* pointing at the sandbox's us-demo account and at `state`. */
  env: Record<string, string>;
  state: TempDir;
  /** A fresh drop folder for each test. */
  drop: TempDir;
}

/**
 * The hooks most watch tests share: one sandbox and state folder per test file; per test, the
 * sandbox reset and a fresh drop folder. Its fields are set by the hooks, so read them inside
 * tests (`fx.drop.path`), never at module level. A file's own afterEach runs before this one's.
 */
export function watchFixture(prefix: string): WatchFixture {
  const fx = {} as WatchFixture;
  beforeAll(async () => {
    fx.state = await tempDir(`${prefix}state-`);
    Object.assign(fx, await sandboxWithEnv(fx.state.path));
  });
  afterAll(async () => {
    await fx.sandbox?.close();
    await fx.state?.remove();
  });
  beforeEach(async () => {
    await fx.sandbox.admin.reset();
    fx.drop = await tempDir(`${prefix}drop-`);
  });
  afterEach(async () => {
    await fx.drop?.remove();
  });
  return fx;
}

/** A sandbox in the test process and HTORDER_* env pointing at its us-demo account. */
export async function sandboxWithEnv(stateDir: string): Promise<{ sandbox: Sandbox; env: Record<string, string> }> {
  const sandbox = await startSandbox({ port: 0 });
  // Fixtures link artwork to a fictional CDN: artwork tests turn the check on.
  return {
    sandbox,
    env: {
      ...sandboxEnv(sandbox, 'us-demo'),
      HTORDER_STATE_DIR: stateDir,
      HTORDER_ARTWORK_CHECK: 'off',
      // Tests submit the same content under many order numbers: no suspected duplicates unless a test asks.
      HTORDER_DUPLICATE_WINDOW: '0',
    },
  };
}

/** An XDG_CONFIG_HOME of this test file's own, holding no config file. */
const NO_USER_CONFIG = mkdtempSync(join(tmpdir(), 'htorder-no-user-config-'));
afterAll(() => rmSync(NO_USER_CONFIG, { recursive: true, force: true }));

export interface RunningWatch {
  stop(): Promise<number>;
  /** Log lines (JSON) written so far. */
  logs(): Record<string, unknown>[];
  healthUrl?: string;
  /** The dashboard's URL (`ui: true`). */
  uiUrl?: string;
  /** Every watch event so far (WatchEvents), in order. */
  events(): WatchEvent[];
}

/** `htorder watch` in-process (the same runWatch the CLI calls), stopped like SIGTERM. */
export async function startWatch(
  input: Partial<WatchInput> & { target: string },
  env: Record<string, string>,
): Promise<RunningWatch> {
  const controller = new AbortController();
  const stderr = sink();
  const lines = (): string[] => stderr.text().split('\n').filter(Boolean);
  let healthUrl: string | undefined;
  let uiUrl: string | undefined;
  const events: WatchEvent[] = [];
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  const done = runWatch(
    {
      ...input,
      flags: { scanIntervalMs: 100, stableTimeMs: 150, retryMinMs: 200, retryMaxMs: 400, ...input.flags },
    },
    {
      stderr: stderr.stream,
      // The user's own ~/.config/htorder/config.yaml is not the test's: its routes would apply
      // to every watcher (a test names its config with HTORDER_CONFIG). Nor is the user's state
      // dir: without HTORDER_STATE_DIR, the test's own XDG_STATE_HOME (isolated-state.ts).
      env: { XDG_CONFIG_HOME: NO_USER_CONFIG, XDG_STATE_HOME: process.env.XDG_STATE_HOME ?? NO_USER_CONFIG, ...env },
      cwd: process.cwd(),
      signal: controller.signal,
      onReady: (info) => {
        healthUrl = info.healthUrl;
        uiUrl = info.uiUrl;
        info.events.on((e) => events.push(e));
        ready();
      },
    },
  );
  await Promise.race([
    readyP,
    done.then((code) => Promise.reject(new Error(`watch ended early with ${code}: ${lines().join('\n')}`))),
  ]);
  return {
    healthUrl,
    uiUrl,
    events: () => [...events],
    stop: async () => {
      controller.abort();
      return done;
    },
    // The log's lines; a line for people (the dashboard's link) is not one.
    logs: () =>
      lines()
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** Polls until `check` returns a value other than undefined (tests wait for effects, never for fixed times). */
export async function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
