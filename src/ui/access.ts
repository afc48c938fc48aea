import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isLoopbackHost } from '../core/config/url-security.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** A token for one start of the dashboard when none is configured: 192 random bits. */
export function generatedToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * The cookie a browser keeps the token in after opening the printed link. Named after the port:
 * cookies are shared by every port of a host, so two dashboards on one machine keep their own.
 */
export function cookieName(port: number): string {
  return `htorder-ui-${port}`;
}

export interface Access {
  token: string;
  /** The cookie carrying the token (cookieName). */
  cookie: string;
  /** Whether the Host header must name loopback (the dashboard binds loopback with a token of its own). */
  loopbackHostOnly: boolean;
}

export type AccessVerdict = 'ok' | 'ok-from-query' | 'unauthorized' | 'bad-host' | 'cross-site';

/**
 * Whether a request may see the dashboard.
 * - It must come from the dashboard's own pages, a typed address or a script: a request a
 *   browser marks as made by another site (`Sec-Fetch-Site`, or an `Origin` that is not the
 *   dashboard's) is refused, so a web page the operator visits cannot make the dashboard work.
 * - It must carry the token: as `?token=` (the printed link; the answer then sets the cookie),
 *   the cookie, the password of HTTP basic auth (any user name: what a browser's prompt sends)
 *   or `Authorization: Bearer TOKEN` (a reverse proxy or a script). Compared in constant time
 *   (digests of equal length), so the time of a refusal tells nothing about the token.
 * - With a generated token the Host header must name loopback too, so a web page from
 *   elsewhere cannot reach the dashboard through a DNS name rebound to 127.0.0.1.
 */
export function allowed(req: IncomingMessage, access: Access, url: URL): AccessVerdict {
  if (crossSite(req)) return 'cross-site';
  if (access.loopbackHostOnly) {
    const host = hostName(req.headers.host ?? '');
    if (host === undefined || !isLoopbackHost(host)) return 'bad-host';
  }
  const wanted = digest(access.token);
  const matches = (s: string | undefined): boolean => s !== undefined && timingSafeEqual(digest(s), wanted);
  if (matches(presentedToken(req.headers.authorization)) || matches(cookieValue(req.headers.cookie, access.cookie)))
    return 'ok';
  return matches(url.searchParams.get('token') ?? undefined) ? 'ok-from-query' : 'unauthorized';
}

function crossSite(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  // A browser too old to send Sec-Fetch-Site still names the page's origin on a cross-site fetch.
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== (req.headers.host ?? '').toLowerCase();
  } catch {
    return true;
  }
}

function hostName(header: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^:]+)(?::\d+)?$/i.exec(header.trim());
  return m?.[1];
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
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
