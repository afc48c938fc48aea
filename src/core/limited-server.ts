import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** The caps of a small HTTP port that may be exposed: HEALTH_LIMITS, and the dashboard's UI_LIMITS. */
export interface ServerLimits {
  maxConnections: number;
  /** A connection with no request in flight (or a request trickling in) is closed after this. */
  idleTimeoutMs: number;
  /** Time to receive a request's headers, and the whole request. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
}

/**
 * An HTTP server no client can hold open: past `maxConnections` a connection is closed as soon
 * as it is accepted, an idle one (connected, saying nothing, or kept alive and forgotten) is
 * dropped, headers and requests have short deadlines, and a malformed request closes the
 * socket. Listens on `host:port`; `url` is `http://HOST:PORT` (IPv6 in brackets).
 */
export async function listenLimited(
  limits: ServerLimits,
  at: { port: number; host: string },
  handler: RequestListener,
): Promise<{ server: Server; url: string }> {
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // How often Node enforces the two timeouts above (default 30 s).
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
    handler,
  );
  server.maxConnections = limits.maxConnections;
  server.timeout = limits.idleTimeoutMs;
  server.on('timeout', (socket: Socket) => socket.destroy());
  server.on('clientError', (_err, socket: Socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { server, url: `http://${host}:${addr.port}` };
}

/**
 * What `htorder ui` and `htorder watch` say when a port cannot be bound (in use, a privileged
 * port, an address this machine does not have): where, the flags and settings that chose it
 * (`chosenBy`, e.g. "--ui-host, --ui-port; uiHost, uiPort"), and the system's reason.
 */
export function cannotListen(at: { host: string; port: number }, chosenBy: string, err: Error): string {
  return `cannot listen on ${at.host} port ${at.port} (${chosenBy}): ${err.message}`;
}

/** An error of the system while binding (it has a code: EADDRINUSE, EACCES, ENOTFOUND …), not a bug of ours. */
export function isListenError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string';
}
