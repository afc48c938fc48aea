import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthState {
  /** 'ok' while scanning normally; 'stopping' after SIGTERM; 'failing' when scans keep failing. */
  status: 'ok' | 'stopping' | 'failing';
  [detail: string]: unknown;
}

export interface HealthServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /healthz` (200 with a small JSON body while healthy, 503 otherwise: what a
 * Kubernetes liveness/readiness probe or a load balancer wants) and `GET /metrics`
 * (Prometheus text format from `registry`). Nothing else; binds loopback unless told.
 */
export async function startHealthServer(opts: {
  port: number;
  host?: string;
  registry: Registry;
  health: () => HealthState;
}): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      const state = opts.health();
      res.writeHead(state.status === 'ok' ? 200 : 503, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(state)}\n`);
      return;
    }
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(err as Error).message}\n`),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz or /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
