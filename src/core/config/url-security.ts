import { UsageError } from '../errors.js';
import type { ApiConfig } from './api-config.js';
import { SETTINGS } from './settings.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * The loopback names and addresses htorder trusts (an IPv6 address with or without brackets):
 * plain http to them leaks nothing, and the dashboard binds them without a token.
 */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.replace(/^\[|\]$/g, '').toLowerCase());
}

/** True for a URL whose requests would cross the network in clear: not https, not loopback. */
export function isClearTextUrl(url: string): boolean {
  const u = new URL(url);
  return u.protocol !== 'https:' && !isLoopbackHost(u.hostname);
}

/**
 * Refuses plain-http hosts other than loopback: the client secret and the bearer token
 * would cross the network in clear. `allowInsecure` (HTORDER_ALLOW_INSECURE=1,
 * --allow-insecure) is the escape hatch for test rigs.
 */
export function checkTransportSecurity(
  config: Pick<ApiConfig, 'baseUrl' | 'authUrl' | 'statusUrl' | 'allowInsecure'>,
): void {
  if (config.allowInsecure) return;
  for (const name of ['baseUrl', 'authUrl', 'statusUrl'] as const) {
    const url = config[name];
    if (url !== null && isClearTextUrl(url)) {
      throw new UsageError(
        `${SETTINGS[name].env} (${url}) is not https; refusing to send credentials in clear (set HTORDER_ALLOW_INSECURE=1 or --allow-insecure to override)`,
      );
    }
  }
}
