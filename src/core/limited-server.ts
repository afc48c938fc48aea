import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** The caps of a small HTTP port that may be exposed: HEALTH_LIMITS, and the dashboard's UI_LIMITS. */
export interface ServerLimits {
  maxConnections: number;
  /** A connection with no request in flight is closed after this (a request trickling in, after requestTimeoutMs). */
  idleTimeoutMs: number;
  /** Time to receive a request's headers, and the whole request. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
}

/** How a server that asks for a token (the dashboard) keeps clients without it from crowding out those with it. */
export interface UntrustedLimits {
  /** Connections that have not shown the token yet, at most; past it the oldest of them is closed for a new one. */
  maxUntrusted: number;
  /**
   * Past this many (in all, or from one address), one that has had `graceMs` to show the token
   * and has not is closed for each new connection.
   */
  keepUntrusted: number;
  keepUntrustedPerAddress: number;
  /** How long a new connection has to send its first request before it may be closed to make room. */
  graceMs: number;
  /** A connection that has not shown the token this long after it was accepted is closed. */
  untrustedMs: number;
}

interface Waiting {
  address: string;
  since: number;
  timer: NodeJS.Timeout;
}

/**
 * Connections of a server that asks for a token, kept apart until they show it (`trust`). A
 * client that connects and says nothing, or sends no token, cannot keep the owner out: a new
 * connection is never refused for them. Each is closed `untrustedMs` after it was accepted;
 * past `keepUntrusted` (in all, or from its address) the oldest that has had `graceMs` to send
 * its first request is closed for each newcomer, and past `maxUntrusted` the oldest whatever
 * its age. The owner's next connection shows the token in its first request, within
 * milliseconds, and is counted apart from then on.
 */
export class UntrustedConnections {
  /** Sockets not trusted yet, oldest first (a Map keeps insertion order). */
  private readonly waiting = new Map<Socket, Waiting>();
  private readonly perAddress = new Map<string, number>();

  constructor(readonly limits: UntrustedLimits) {}

  /** Follows the server's connections. */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.accepted(socket));
  }

  /** The socket's client showed the token: it is no longer counted or timed as untrusted. */
  trust(socket: Socket): void {
    this.forget(socket);
  }

  private accepted(socket: Socket): void {
    const address = socket.remoteAddress ?? '';
    const timer = setTimeout(() => socket.destroy(), this.limits.untrustedMs);
    timer.unref();
    this.waiting.set(socket, { address, since: Date.now(), timer });
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    socket.once('close', () => this.forget(socket));
    const graced = Date.now() - this.limits.graceMs;
    if ((this.perAddress.get(address) ?? 0) > this.limits.keepUntrustedPerAddress)
      this.evict((w) => w.address === address && w.since <= graced);
    if (this.waiting.size > this.limits.keepUntrusted) this.evict((w) => w.since <= graced);
    if (this.waiting.size > this.limits.maxUntrusted) this.evict(() => true);
  }

  /** Closes the oldest untrusted connection that `may` be closed. */
  private evict(may: (w: Waiting) => boolean): void {
    for (const [socket, w] of this.waiting) {
      if (!may(w)) continue;
      this.forget(socket);
      socket.destroy();
      return;
    }
  }

  private forget(socket: Socket): void {
    const w = this.waiting.get(socket);
    if (!w) return;
    clearTimeout(w.timer);
    this.waiting.delete(socket);
    const left = (this.perAddress.get(w.address) ?? 1) - 1;
    if (left > 0) this.perAddress.set(w.address, left);
    else this.perAddress.delete(w.address);
  }
}

/**
 * An HTTP server no client can hold open: past `maxConnections` a connection is closed as soon
 * as it is accepted, an idle one (connected, saying nothing, or kept alive and forgotten) is
 * dropped, headers and requests have short deadlines, and a malformed request closes the
 * socket. With `untrusted` (a server that asks for a token), connections that have not shown
 * it are held to its caps and deadline instead (UntrustedConnections), and `maxConnections`
 * counts on top of them. Listens on `host:port`; `url` is `http://HOST:PORT` (IPv6 in brackets).
 */
export async function listenLimited(
  limits: ServerLimits,
  at: { port: number; host: string },
  handler: RequestListener,
  untrusted?: UntrustedConnections,
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
    whileMade(handler, limits.idleTimeoutMs),
  );
  // Untrusted connections are held to their own cap, on top of this one: the system never
  // refuses a connection for them, so the owner's are never the ones turned away.
  server.maxConnections = limits.maxConnections + (untrusted ? untrusted.limits.maxUntrusted + 1 : 0);
  untrusted?.attach(server);
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
 * `handler` with the socket's idle timeout paused from a request's arrival until its response is
 * written: Node counts a socket's silence, and a socket is silent while the server makes a page
 * (a long report, or several pages asked for at once on a busy host), which is the server's wait,
 * not an idle client's.
 */
function whileMade(handler: RequestListener, idleTimeoutMs: number): RequestListener {
  return (req, res) => {
    const socket = req.socket;
    socket.setTimeout(0);
    res.once('finish', () => {
      if (!socket.destroyed) socket.setTimeout(idleTimeoutMs);
    });
    handler(req, res);
  };
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
