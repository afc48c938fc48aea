import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient, type ApiClient } from '../api/client.js';
import type { ApiConfig } from '../config/api-config.js';
import { resolveConfig, type ConfigFlags } from '../config/resolve-config.js';
import { sandboxConfig } from '../config/sandbox-config.js';
import { createLogger, isLogLevel, wantsColor, type Logger, type LogLevel } from '../log/logger.js';
import { UsageError } from '../errors.js';

export interface ApiSessionInput {
  sandbox?: boolean;
  /** Sandbox demo account (with --sandbox). */
  account?: string;
  logLevel?: string;
  flags: ConfigFlags;
  env: Record<string, string | undefined>;
  cwd: string;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface ApiSession {
  config: ApiConfig;
  client: ApiClient;
  logger: Logger;
  /** Closes the client, and the in-process sandbox and its throw-away state dir if any. */
  close(): Promise<void>;
}

/**
 * What every command that talks to the API starts with (api, plan, run, watch, track): the
 * logger, the configuration — from env/profile/flags, or from an in-process sandbox with
 * `--sandbox` — and a client. Configuration mistakes throw UsageError (exit 2).
 */
export async function openApiSession(input: ApiSessionInput): Promise<ApiSession> {
  const level = input.logLevel ?? input.env.HTORDER_LOG_LEVEL ?? 'warn';
  if (!isLogLevel(level)) throw new UsageError(`unknown log level "${level}" (fatal, error, warn, info, debug, trace, silent)`);
  const logger = createLogger({ level: level as LogLevel, pretty: input.stderr.isTTY === true, colorize: wantsColor(input.stderr, input.env), destination: input.stderr });
  const cleanups: (() => Promise<void>)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  let config: ApiConfig;
  try {
    config = input.sandbox ? await sandboxSession(input, cleanups) : resolveNamed(input);
  } catch (err) {
    await closeAll();
    throw err;
  }
  const client = createApiClient(config, { logger });
  cleanups.push(() => client.close());
  return { config, client, logger, close: closeAll };
}

function resolveNamed(input: ApiSessionInput): ApiConfig {
  if (input.account !== undefined) throw new UsageError('--account needs --sandbox (for configured accounts use --profile)');
  return resolveConfig({ env: input.env, flags: input.flags, cwd: input.cwd });
}

async function sandboxSession(input: ApiSessionInput, cleanups: (() => Promise<void>)[]): Promise<ApiConfig> {
  const clash = (['profile', 'baseUrl', 'authUrl', 'realm', 'clientId', 'clientSecretFile', 'statusUrl'] as const).find(
    (k) => input.flags[k] !== undefined,
  );
  if (clash) throw new UsageError(`--sandbox supplies its own account; it cannot be combined with --${kebab(clash)}`);
  // Loaded only on demand: the simulator is not needed for real calls.
  const { startSandbox } = await import('../sandbox/index.js');
  const sandbox = await startSandbox({ port: 0 });
  cleanups.push(() => sandbox.close());
  // The in-process sandbox forgets everything when it stops, so its ledger must too: a
  // throw-away state dir unless one was asked for explicitly.
  let stateDir = input.flags.stateDir ?? input.env.HTORDER_STATE_DIR;
  if (stateDir === undefined) {
    const dir = await mkdtemp(join(tmpdir(), 'htorder-sandbox-state-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    stateDir = dir;
  }
  const concurrency = input.flags.concurrency ?? input.env.HTORDER_CONCURRENCY;
  const base = sandboxConfig(sandbox, input.account ?? 'us-demo', { stateDir });
  if (concurrency === undefined) return base;
  const n = Number(concurrency);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`HTORDER_CONCURRENCY / --concurrency must be a whole number >= 1, got "${concurrency}"`);
  return { ...base, concurrency: n };
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
