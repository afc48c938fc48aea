import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiConfig } from '../../src/core/config/api-config.js';

/** A request as a loopback test server saw it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: SeenRequest, res: ServerResponse) => void | Promise<void>;

/**
 * A tiny node:http server for transport behaviours the sandbox cannot produce (a server
 * that never answers, exact status sequences). Records every request.
 */
export async function startLoopback(
  handler: Handler,
): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(r);
      void handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export const SECRET = 'loopback-secret-Zq9';

/** Config pointing both hosts at one loopback server: auth under /auth, API under /api. */
export function loopbackConfig(url: string, overrides: Partial<ApiConfig> = {}): ApiConfig {
  return {
    baseUrl: `${url}/api`,
    authUrl: `${url}/auth`,
    realm: 'test',
    clientId: 'client-1',
    clientSecret: SECRET,
    statusUrl: `${url}/status`,
    stateDir: '/nonexistent',
    concurrency: 2,
    appName: 'API',
    timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
    allowInsecure: false,
    profile: null,
    ...overrides,
  };
}

export const isTokenRequest = (r: SeenRequest): boolean => r.url.startsWith('/auth/');
export const apiRequests = (seen: SeenRequest[]): SeenRequest[] => seen.filter((r) => r.url.startsWith('/api/'));
export const tokenRequests = (seen: SeenRequest[]): SeenRequest[] => seen.filter(isTokenRequest);

/** Token endpoint answer with a distinct token per call. */
export function tokenReply(res: ServerResponse, n: number, expiresIn = 600): void {
  json(res, 200, { access_token: `tok-${n}-abcdef`, expires_in: expiresIn, token_type: 'Bearer' });
}
