import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isLoopbackHost } from '../core/config/url-security.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Whether a request may see the dashboard.
 * - With a token: the request must carry it, as the password of HTTP basic auth (any user
 *   name: what a browser's prompt sends) or as `Authorization: Bearer TOKEN` (a reverse proxy
 *   or a script). Compared in constant time (digests of equal length), so the time of a
 *   refusal tells nothing about the token.
 * - Without one (loopback only): the Host header must name loopback too, so a web page from
 *   elsewhere cannot read the dashboard through a DNS name rebound to 127.0.0.1.
 */
export function allowed(req: IncomingMessage, token: string | undefined): 'ok' | 'unauthorized' | 'bad-host' {
  if (token === undefined) {
    const host = hostName(req.headers.host ?? '');
    return host !== undefined && isLoopbackHost(host) ? 'ok' : 'bad-host';
  }
  const presented = presentedToken(req.headers.authorization);
  if (presented === undefined) return 'unauthorized';
  return timingSafeEqual(digest(presented), digest(token)) ? 'ok' : 'unauthorized';
}

function hostName(header: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^:]+)(?::\d+)?$/i.exec(header.trim());
  return m?.[1];
}

function presentedToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value] = header.split(/\s+/, 2);
  if (!scheme || !value) return undefined;
  if (scheme.toLowerCase() === 'bearer') return value;
  if (scheme.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : decoded.slice(colon + 1);
}
