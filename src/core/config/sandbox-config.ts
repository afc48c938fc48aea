import { homedir } from 'node:os';
import { UsageError } from '../errors.js';
import { SETTINGS } from './settings.js';
import { defaultStateDir, type ApiConfig } from './api-config.js';

/**
 * The part of the sandbox's SandboxInfo that configuration needs. Declared structurally
 * so that config does not import the simulator (it stays out of production bundles).
 */
export interface SandboxDirectory {
  regions: Record<string, { baseUrl: string; authUrl: string; realm: string; statusUrl: string }>;
  accounts: { name: string; region: string; clientId: string; clientSecret: string }[];
}

/**
 * The ApiConfig of one sandbox demo account (default `us-demo`), for `--sandbox`: the sandbox's
 * URLs and credentials, the table's defaults (settings.ts) for the rest but what `overrides` sets.
 */
export function sandboxConfig(
  sandbox: SandboxDirectory,
  accountName = 'us-demo',
  overrides: Partial<Pick<ApiConfig, 'stateDir' | 'concurrency' | 'ledgerAccount'>> = {},
): ApiConfig {
  const account = sandbox.accounts.find((a) => a.name === accountName);
  if (!account) {
    throw new UsageError(
      `unknown sandbox account "${accountName}" (known: ${sandbox.accounts.map((a) => a.name).join(', ')})`,
    );
  }
  const region = sandbox.regions[account.region];
  if (!region) throw new UsageError(`sandbox account "${accountName}" names unknown region "${account.region}"`);
  return {
    baseUrl: region.baseUrl,
    authUrl: region.authUrl,
    realm: region.realm,
    clientId: account.clientId,
    clientSecret: account.clientSecret,
    statusUrl: region.statusUrl,
    stateDir: overrides.stateDir ?? defaultStateDir(process.env, homedir()),
    concurrency: overrides.concurrency ?? SETTINGS.concurrency.default,
    appName: SETTINGS.appName.default,
    timeouts: {
      connectMs: SETTINGS.connectTimeoutMs.default,
      headersMs: SETTINGS.requestTimeoutMs.default,
      bodyMs: SETTINGS.requestTimeoutMs.default,
    },
    allowInsecure: false,
    profile: null,
    ledgerAccount: overrides.ledgerAccount,
  };
}

/**
 * The same account as environment variables (HTORDER_BASE_URL … HTORDER_CLIENT_SECRET), for
 * running htorder in another process — or in-process through the normal configuration path —
 * against a sandbox: the demo, the tests, the benchmarks.
 */
export function sandboxEnv(sandbox: SandboxDirectory, accountName = 'us-demo'): Record<string, string> {
  const c = sandboxConfig(sandbox, accountName);
  return {
    [SETTINGS.baseUrl.env]: c.baseUrl,
    [SETTINGS.authUrl.env]: c.authUrl,
    [SETTINGS.realm.env]: c.realm,
    [SETTINGS.clientId.env]: c.clientId,
    [SETTINGS.clientSecret.env]: c.clientSecret,
  };
}
