import { isIP } from 'node:net';
import { UsageError } from '../errors.js';
import type { ApiConfig } from './api-config.js';
import { SETTINGS } from './settings.js';

/** Loopback (localhost, ::1, 127.0.0.0/8), where plain http leaks nothing; brackets around IPv6 allowed. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
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
  const urls: [string, string | null][] = [
    [SETTINGS.baseUrl.env, config.baseUrl],
    [SETTINGS.authUrl.env, config.authUrl],
    [SETTINGS.statusUrl.env, config.statusUrl],
  ];
  for (const [name, url] of urls) {
    if (url === null) continue;
    if (isClearTextUrl(url)) {
      throw new UsageError(
        `${name} (${url}) is not https; refusing to send credentials in clear (set HTORDER_ALLOW_INSECURE=1 or --allow-insecure to override)`,
      );
    }
  }
}
