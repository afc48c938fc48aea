import { type Clock, systemClock } from '../core/clock.js';
import { mkdir } from 'node:fs/promises';
import { createApiClient, type ApiClient } from '../api/client.js';
import { defaultStateDir, type ApiConfig } from '../core/config/api-config.js';
import { apiConfigFrom, type ConfigFlags } from '../core/config/resolve-config.js';
import { flagName, resolveSettings, type Settings, type SettingFlags } from '../core/config/resolve-settings.js';
import { sandboxConfig, type SandboxDirectory } from '../core/config/sandbox-config.js';
import { SETTINGS } from '../core/config/settings.js';
import { createLogger, isLogLevel, wantsColor, type Logger } from '../core/log/logger.js';
import { UsageError } from '../core/errors.js';
import { sandboxAccountKey } from '../storage/ledger/account-key.js';
import { FolderLedger } from '../storage/ledger/folder-ledger.js';

export interface ApiSessionInput {
  sandbox?: boolean;
  /** Sandbox demo account (with --sandbox). */
  account?: string;
  /** `--sandbox-reset` (with --sandbox): start over, forgetting the sandbox's jobs and their ledger entries. */
  sandboxReset?: boolean;
  /** `--log-level`: a flag like the others in `flags`, kept apart because every caller has it. */
  logLevel?: string;
  flags: ConfigFlags;
  env: Record<string, string | undefined>;
  cwd: string;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Defaults of this command that differ from the table's (watch logs at `info`). */
  defaults?: SettingFlags;
  /**
   * With `sandbox`: another demo account of this session's sandbox, and its state dir, instead
   * of a sandbox of its own (watch routes: one simulator, several accounts).
   */
  sandboxOf?: ApiSession;
}

export interface ApiSession {
  config: ApiConfig;
  client: ApiClient;
  logger: Logger;
  /** Every setting of the command, resolved once (flags, profile, environment, defaults). */
  settings: Settings;
  /** Closes the client, and the in-process sandbox if any. */
  close(): Promise<void>;
  /** The in-process sandbox (`--sandbox`), for sessions of its other accounts (sandboxOf). */
  sandbox?: SandboxDirectory;
  /** The calendar clock of every time-based rule of this process (core/clock.ts). */
  clock: Clock;
}

/** The settings that say which account a session talks to (besides the profile that may hold them). */
export const ACCOUNT_SETTINGS = ['baseUrl', 'authUrl', 'realm', 'clientId', 'clientSecretFile', 'statusUrl'] as const;

/**
 * What every command that talks to the API starts with (api, plan, run, watch, track): the
 * settings, the logger, the account's configuration — from flags, profile and environment,
 * or from an in-process sandbox with `--sandbox` — and a client. Configuration mistakes throw
 * UsageError (exit 2).
 */
export async function openApiSession(input: ApiSessionInput): Promise<ApiSession> {
  const flags: SettingFlags = { ...input.flags, ...(input.logLevel === undefined ? {} : { logLevel: input.logLevel }) };
  // The sandbox brings its own account, so no profile is read (nor required to exist).
  const settings = resolveSettings({
    env: input.env,
    flags,
    cwd: input.cwd,
    // With --sandbox, a failing artwork link warns by default: trials and the samples link to
    // fictional hosts, and the sandbox then keeps the job waiting for artwork, as the printer would.
    defaults: input.sandbox ? { artworkCheck: 'warn', ...input.defaults } : input.defaults,
    profiles: !input.sandbox,
  });
  // The table's parser admits only pino's levels; the guard narrows the type without a cast.
  const level = settings.get('logLevel');
  const logger = createLogger({
    level: level !== undefined && isLogLevel(level) ? level : undefined,
    pretty: input.stderr.isTTY === true,
    colorize: wantsColor(input.stderr, input.env),
    destination: input.stderr,
  });
  const opened: { config: ApiConfig; sandbox?: SandboxDirectory; close?: () => Promise<void> } = input.sandbox
    ? await sandboxSession(input, settings)
    : { config: resolveNamed(input, settings) };
  const { config } = opened;
  // Warnings of the configuration (a secret file others can read), once the logger exists.
  for (const warning of settings.warnings) logger.warn(warning);
  if (settings.explicit('stateDir') === undefined) {
    // The per-user default holds the ledger of every account of this user (and the sandbox's
    // state): private to the user.
    await mkdir(config.stateDir, { recursive: true, mode: 0o700 }).catch(() => undefined);
  }
  const client = createApiClient(config, { logger });
  return {
    config,
    client,
    logger,
    settings,
    clock: systemClock,
    close: async () => {
      await client.close().catch(() => undefined);
      await opened.close?.().catch(() => undefined);
    },
    ...(opened.sandbox ? { sandbox: opened.sandbox } : {}),
  };
}

/** Every command that opens a session takes --sandbox: said where settings are missing. */
const SANDBOX_HINT = 'to try htorder without an account, add --sandbox (an in-process simulator with demo accounts)';

function resolveNamed(input: ApiSessionInput, settings: Settings): ApiConfig {
  if (input.account !== undefined) {
    throw new UsageError('--account needs --sandbox (for configured accounts use --profile)');
  }
  if (input.sandboxReset === true) throw new UsageError('--sandbox-reset needs --sandbox (it resets only the sandbox)');
  return apiConfigFrom(settings, { missingHint: SANDBOX_HINT });
}

async function sandboxSession(
  input: ApiSessionInput,
  settings: Settings,
): Promise<{ config: ApiConfig; sandbox: SandboxDirectory; close?: () => Promise<void> }> {
  // `--sandbox` supplies its own account: giving one as well is a contradiction.
  const clash = (['profile', ...ACCOUNT_SETTINGS] as const).find((k) => input.flags[k] !== undefined);
  if (clash) throw new UsageError(`--sandbox supplies its own account; it cannot be combined with ${flagName(clash)}`);
  // Checked before the sandbox starts: the same limits as for a configured account.
  const concurrency = settings.get('concurrency');
  const stateDir = settings.get('stateDir') ?? defaultStateDir(settings.env, settings.home);
  const accountName = input.account ?? 'us-demo';
  // The sandbox keeps its jobs under the state dir, and its ledger is found again under a key
  // that does not depend on its port: a second run answers `already-submitted`, as a real
  // account would. Another process may use the same state at once (src/sandbox/persistence.ts).
  const ledgerAccount = sandboxAccountKey(accountName);
  const lockStaleMs = settings.get('lockStaleMs') ?? SETTINGS.lockStaleMs.default;
  // Loaded only on demand: the simulator and its state file are not needed for real calls.
  const { resetSandboxState, SandboxStateFile, sandboxStateFile, unusableState } = await import('./sandbox-state.js');
  const file = sandboxStateFile(stateDir);
  const { startSandbox, SandboxStateError, sandboxAccountNames } = await import('../sandbox/index.js');
  // Before anything is reset: a mistyped --account changes nothing.
  if (!sandboxAccountNames().includes(accountName)) {
    throw new UsageError(`unknown sandbox account "${accountName}" (known: ${sandboxAccountNames().join(', ')})`);
  }
  const shared = input.sandboxOf;
  if (shared?.sandbox) {
    const config = sandboxConfig(shared.sandbox, accountName, {
      stateDir: shared.config.stateDir,
      concurrency,
      ledgerAccount,
    });
    return { config, sandbox: shared.sandbox };
  }
  if (input.sandboxReset === true) {
    const message = await resetSandboxState({
      store: new SandboxStateFile(file, { staleMs: lockStaleMs }),
      ledger: new FolderLedger(stateDir, { staleMs: lockStaleMs }),
      seed: SANDBOX_SEED,
    });
    input.stderr.write(`htorder: ${message}\n`);
  }
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  try {
    sandbox = await startSandbox({
      port: 0,
      seed: SANDBOX_SEED,
      state: new SandboxStateFile(file, { staleMs: lockStaleMs }),
      fetchArtwork: true,
    });
  } catch (err) {
    if (err instanceof SandboxStateError) throw unusableState(file, `is not a state htorder can use (${err.message})`);
    throw err;
  }
  const config = sandboxConfig(sandbox, accountName, { stateDir, concurrency, ledgerAccount });
  return { config, sandbox, close: () => sandbox.close() };
}

/** The seed of the in-process sandbox: fixed, so its saved state and its secrets fit every run. */
const SANDBOX_SEED = 1;
