import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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
/**
 * Limits of the health port, which may be exposed (the Docker image binds 0.0.0.0): a probe
 * or a scrape is one small GET answered at once, so a handful of connections, short
 * timeouts and small headers are plenty, and no client (or 20,000 idle ones) can hold the
 * watcher's file descriptors: past the cap a connection is closed as soon as it is accepted,
 * and an idle one is dropped after IDLE_TIMEOUT_MS.
 */
export const HEALTH_LIMITS = {
  maxConnections: 32,
  /** A connection with no request in flight (or a request trickling in) is closed after this. */
  idleTimeoutMs: 5_000,
  /** Time to receive a request's headers, and the whole request. */
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 2_000,
  maxHeaderBytes: 8 * 1024,
};

export async function startHealthServer(opts: {
  port: number;
  host?: string;
  registry: Registry;
  health: () => HealthState;
  /** Tests lower these; the defaults are HEALTH_LIMITS. */
  limits?: Partial<typeof HEALTH_LIMITS>;
}): Promise<HealthServer> {
  const limits = { ...HEALTH_LIMITS, ...opts.limits };
  const server: Server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // How often Node enforces the two timeouts above (default 30 s).
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
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
  server.maxConnections = limits.maxConnections;
  // Idle sockets (connected, saying nothing, or kept alive and forgotten) are closed.
  server.timeout = limits.idleTimeoutMs;
  server.on('timeout', (socket: Socket) => socket.destroy());
  server.on('clientError', (_err, socket: Socket) => socket.destroy());
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
