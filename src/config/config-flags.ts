import { Option, type Command } from 'commander';
import type { ConfigFlags } from './resolve-config.js';

/**
 * Adds the configuration flags to a command (api, plan, run, watch share them), so every
 * command spells them the same way. Read them back with configFlagsFrom(cmd.opts()).
 */
export function addConfigOptions(command: Command): Command {
  return command
    .addOption(new Option('--profile <name>', 'profile of the config file to use (env HTORDER_PROFILE)'))
    .addOption(new Option('--config <file>', 'config file with named profiles (env HTORDER_CONFIG)'))
    .addOption(new Option('--base-url <url>', "the region's API host (env HTORDER_BASE_URL)"))
    .addOption(new Option('--auth-url <url>', "the region's authentication host (env HTORDER_AUTH_URL)"))
    .addOption(new Option('--realm <realm>', 'authentication realm (env HTORDER_REALM)'))
    .addOption(new Option('--client-id <id>', 'API key id (env HTORDER_CLIENT_ID)'))
    .addOption(new Option('--client-secret-file <file>', 'file holding the API secret (env HTORDER_CLIENT_SECRET_FILE)'))
    .addOption(new Option('--status-url <url>', "the region's status page host (env HTORDER_STATUS_URL)"))
    .addOption(new Option('--state-dir <dir>', 'ledger directory, default .htorder/ (env HTORDER_STATE_DIR)'))
    .addOption(new Option('--concurrency <n>', 'API requests in flight at once, default 8 (env HTORDER_CONCURRENCY)'))
    .addOption(new Option('--app-name <name>', 'X-Application-Name header, default API (env HTORDER_APP_NAME)'))
    .addOption(new Option('--connect-timeout-ms <ms>', 'connect timeout (env HTORDER_CONNECT_TIMEOUT_MS)'))
    .addOption(new Option('--request-timeout-ms <ms>', 'response timeout (env HTORDER_REQUEST_TIMEOUT_MS)'))
    .addOption(new Option('--allow-insecure', 'allow plain-http hosts other than loopback (env HTORDER_ALLOW_INSECURE=1)'));
}

/** Picks the configuration flags out of commander's parsed options (camel-cased by commander). */
export function configFlagsFrom(opts: Record<string, unknown>): ConfigFlags {
  const s = (k: string): string | undefined => (typeof opts[k] === 'string' ? (opts[k] as string) : undefined);
  return {
    profile: s('profile'),
    config: s('config'),
    baseUrl: s('baseUrl'),
    authUrl: s('authUrl'),
    realm: s('realm'),
    clientId: s('clientId'),
    clientSecretFile: s('clientSecretFile'),
    statusUrl: s('statusUrl'),
    stateDir: s('stateDir'),
    concurrency: s('concurrency'),
    appName: s('appName'),
    connectTimeoutMs: s('connectTimeoutMs'),
    requestTimeoutMs: s('requestTimeoutMs'),
    allowInsecure: opts.allowInsecure === true ? true : undefined,
  };
}
