import { type Clock, nowIso, offsetClock } from '../core/clock.js';
import { lstatSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createApiClient, type ApiClient } from '../api/client.js';
import { defaultStateDir, type ApiConfig } from '../core/config/api-config.js';
import { apiConfigFrom, type ConfigFlags } from '../core/config/resolve-config.js';
import { flagName, resolveSettings, type Settings, type SettingFlags } from '../core/config/resolve-settings.js';
import { sandboxConfig, type SandboxDirectory } from '../core/config/sandbox-config.js';
import { SETTINGS } from '../core/config/settings.js';
import { createLogger, isLogLevel, wantsColor, type Logger } from '../core/log/logger.js';
import { UsageError } from '../core/errors.js';
import { modeText, writableByOthers } from '../core/file-owner.js';
import { sandboxAccountKey } from '../storage/ledger/account-key.js';
import { FolderLedger } from '../storage/ledger/folder-ledger.js';
import { checkSettings, settingsInForce } from './check-settings.js';

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
  /** What selected `flags.profile` when the user did not (a watch route), for messages. */
  profileChosenBy?: string;
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
  /**
   * The calendar clock of every time-based rule of this session (core/clock.ts): the real clock
   * moved by the clockOffset setting, and with `--sandbox` by the sandbox's own clock too.
   */
  clock: Clock;
  /**
   * Picks up a clock the sandbox's state moved in another process (`htorder sandbox clock`);
   * nothing to do without `--sandbox`. Each input's context calls it.
   */
  refreshClock(): Promise<void>;
  /** With `--sandbox`: the simulator's clock, which sessions of its other accounts share. */
  sandboxClock?: SandboxClock;
}

/** The settings that say which account a session talks to (besides the profile that may hold them). */
export const ACCOUNT_SETTINGS = ['baseUrl', 'authUrl', 'realm', 'clientId', 'clientSecretFile', 'statusUrl'] as const;

/** What `--sandbox` supplies itself: no profile, config file or variable is read for them. */
const SANDBOX_SUPPLIES = [...ACCOUNT_SETTINGS, 'clientSecret'] as const;

/**
 * What every command that talks to the API starts with (api, plan, run, watch, track): the
 * settings, the logger, the account's configuration — from flags, profile and environment,
 * or from an in-process sandbox with `--sandbox` — and a client. Configuration mistakes throw
 * UsageError (exit 2).
 */
export async function openApiSession(input: ApiSessionInput): Promise<ApiSession> {
  const flags: SettingFlags = { ...input.flags, ...(input.logLevel === undefined ? {} : { logLevel: input.logLevel }) };
  // The sandbox brings its own account: a profile (however selected) gives everything else —
  // limits, guardrails, artwork, notifications — as it would for the real account.
  const settings = resolveSettings({
    env: input.env,
    flags,
    cwd: input.cwd,
    // With --sandbox, a failing artwork link warns by default: trials and the samples link to
    // fictional hosts, and the sandbox then keeps the job waiting for artwork, as the printer would.
    defaults: input.sandbox ? { artworkCheck: 'warn', ...input.defaults } : input.defaults,
    ...(input.sandbox ? { suppliedElsewhere: SANDBOX_SUPPLIES } : {}),
    ...(input.profileChosenBy === undefined ? {} : { profileChosenBy: input.profileChosenBy }),
  });
  // Before the logger, the sandbox or any request: a bad value of any setting stops here (exit 2).
  checkSettings(settings);
  checkStateDirMode(settings);
  // The table's parser admits only pino's levels; the guard narrows the type without a cast.
  const level = settings.get('logLevel');
  const logger = createLogger({
    level: level !== undefined && isLogLevel(level) ? level : undefined,
    pretty: input.stderr.isTTY === true,
    colorize: wantsColor(input.stderr, input.env),
    destination: input.stderr,
  });
  const opened: OpenedAccount = input.sandbox
    ? await sandboxSession(input, settings)
    : { config: resolveNamed(input, settings) };
  const { config } = opened;
  logger.debug({ settings: settingsInForce(settings) }, 'settings in force');
  // Warnings of the configuration (a secret file others can read), once the logger exists.
  for (const warning of settings.warnings) logger.warn(warning);
  if (settings.explicit('stateDir') === undefined) {
    // The per-user default holds the ledger of every account of this user (and the sandbox's
    // state): private to the user.
    await mkdir(config.stateDir, { recursive: true, mode: 0o700 }).catch(() => undefined);
  }
  const client = createApiClient(config, { logger });
  const offsetMs = settings.get('clockOffset');
  const clock = sessionClock(offsetMs, opened.clock);
  if (offsetMs !== 0) {
    // A rehearsal's setting left in a real deployment would move every date rule: said every time.
    const { source } = settings.raw('clockOffset') ?? { source: 'clockOffset' };
    logger.warn({ now: nowIso(clock) }, `the calendar clock is moved by ${source}`);
  }
  return {
    config,
    client,
    logger,
    settings,
    clock,
    refreshClock: async () => {
      await opened.clock?.refresh().catch(() => undefined);
    },
    close: async () => {
      await client.close().catch(() => undefined);
      await opened.close?.().catch(() => undefined);
    },
    ...(opened.sandbox ? { sandbox: opened.sandbox } : {}),
    ...(opened.clock ? { sandboxClock: opened.clock } : {}),
  };
}

/** The account a session talks to, and with `--sandbox` the simulator that plays it and its clock. */
interface OpenedAccount {
  config: ApiConfig;
  sandbox?: SandboxDirectory;
  close?: () => Promise<void>;
  clock?: SandboxClock;
}

/** The in-process sandbox's clock, as far as htorder's own calendar follows it. */
interface SandboxClock {
  /** How far the sandbox's clock is ahead of real time, as last read. */
  offsetMs(): number;
  /** Reads it again from the state another process may have saved. */
  refresh(): Promise<void>;
}

/**
 * The real clock moved by the clockOffset setting, and with `--sandbox` by the sandbox's offset,
 * read each time: a `htorder sandbox clock +1d` moves a running `watch --sandbox` too.
 */
function sessionClock(offsetMs: number, sandbox: SandboxClock | undefined): Clock {
  if (!sandbox) return offsetClock(offsetMs);
  return { now: () => Date.now() + offsetMs + sandbox.offsetMs() };
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

async function sandboxSession(input: ApiSessionInput, settings: Settings): Promise<OpenedAccount> {
  // `--sandbox` supplies its own account: giving one as well is a contradiction.
  const clash = ACCOUNT_SETTINGS.find((k) => input.flags[k] !== undefined);
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
  const { resetSandboxState, SandboxStateFile, sandboxStateFile, unusableState, SANDBOX_SEED } = await import(
    './sandbox-state.js'
  );
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
    // One simulator, one clock.
    return { config, sandbox: shared.sandbox, ...(shared.sandboxClock ? { clock: shared.sandboxClock } : {}) };
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
  const clock = { offsetMs: () => sandbox.clockOffsetMs(), refresh: () => sandbox.refresh() };
  return { config, sandbox, close: () => sandbox.close(), clock };
}

/**
 * Refuses a chosen state dir that other users may write (exit 2), as a config file or a saved plan
 * others may write is refused: whoever can rename or create entries in it can put a ledger of
 * their own in its place — one that approves a held job, forgets the day's spending, or holds the
 * sandbox's state. Group write stays allowed: a team's shared state dir is one group's. The
 * per-user default is created private (0700) under the user's home. A state dir that cannot be a
 * folder (a file, a link that leads nowhere) is refused here too, rather than failing each job.
 */
function checkStateDirMode(settings: Settings): void {
  const dir = settings.explicit('stateDir');
  if (dir === undefined) return;
  const { source } = settings.raw('stateDir') ?? { source: 'stateDir' };
  const refusal = (why: string): UsageError => new UsageError(`the state dir ${dir} (${source}) ${why}`);
  let mode: number;
  try {
    const st = statSync(dir);
    if (!st.isDirectory()) throw refusal('is not a folder; choose a folder (it is made when missing)');
    mode = st.mode;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    // Not there yet: it is made when first written. A link that leads nowhere cannot be.
    if (code === 'ENOENT' && lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink() !== true) return;
    throw refusal(
      code === 'ENOENT'
        ? 'is a symbolic link to a folder that does not exist; make that folder, or choose another'
        : `cannot be used as a folder (${code ?? 'error'})`,
    );
  }
  if (writableByOthers(mode) === undefined) return;
  throw refusal(
    `may be written by other users (mode ${modeText(mode)}): ` +
      `anyone could put another ledger in its place, one that approves held jobs or forgets what was sent; ` +
      `run chmod o-w ${dir}, or choose a folder only you (or your group) may write`,
  );
}
