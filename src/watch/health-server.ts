import type { Registry } from 'prom-client';
import { listenLimited, type ServerLimits } from '../core/limited-server.js';

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
 * Limits of the health port, which may be exposed (the Docker image binds 0.0.0.0): a probe
 * or a scrape is one small GET answered at once, so a handful of connections, short
 * timeouts and small headers are plenty, and no client (or 20,000 idle ones) can hold the
 * watcher's file descriptors (core/limited-server.ts).
 */
export const HEALTH_LIMITS: ServerLimits = {
  maxConnections: 32,
  idleTimeoutMs: 5_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 2_000,
  maxHeaderBytes: 8 * 1024,
};

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
  /** Tests lower these; the defaults are HEALTH_LIMITS. */
  limits?: Partial<typeof HEALTH_LIMITS>;
}): Promise<HealthServer> {
  const limits = { ...HEALTH_LIMITS, ...opts.limits };
  const { server, url } = await listenLimited(
    limits,
    { port: opts.port, host: opts.host ?? '127.0.0.1' },
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      // Nothing here takes a body: one announced is refused and the connection closed unread.
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', connection: 'close' }).end();
        return;
      }
      if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) {
        res.writeHead(413, { connection: 'close' }).end();
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
    },
  );
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
