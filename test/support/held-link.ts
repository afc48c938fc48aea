import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP relay in front of a server whose client-to-server bytes can be held back and
 * let through later, in order: a host whose statements are stuck on the way (a network that
 * stalls, a database that restarts while a write is retried) for exactly as long as a test
 * says. Answers flow back untouched.
 */
export interface HeldLink {
  port: number;
  /** From now on, what clients send is kept here (new connections too). */
  hold(): void;
  /** Sends on everything kept, in order, and passes bytes straight through again. */
  release(): void;
  close(): Promise<void>;
}

export async function startHeldLink(targetPort: number, host = '127.0.0.1'): Promise<HeldLink> {
  let held = false;
  const waiting: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, host);
    sockets.add(client).add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.on('data', (d: Buffer) => client.write(d));
    client.on('data', (d: Buffer) => {
      if (held) waiting.push(() => upstream.write(d));
      else upstream.write(d);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hold() {
      held = true;
    },
    release() {
      held = false;
      for (const send of waiting.splice(0)) send();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A loopback TCP relay in front of a PostgreSQL server that keeps back, on its first
 * connection, everything the server says after the client's last password message (the end of
 * a SCRAM login: the login's success and "ready for query"), together with whatever the server
 * says next — a shutdown's "terminating connection" — until `release()`, then hands it all to
 * the client in one write, as a server that sends both at once does. Later connections pass
 * straight through.
 */
export interface LoginStall {
  port: number;
  /** Resolves once the server's answer to the login is being kept back. */
  stalled: Promise<void>;
  release(): void;
  close(): Promise<void>;
}

export async function startLoginStall(targetPort: number, host = '127.0.0.1'): Promise<LoginStall> {
  let first = true;
  let onStalled!: () => void;
  const stalled = new Promise<void>((resolve) => (onStalled = resolve));
  let release: () => void = () => undefined;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, host);
    sockets.add(client).add(upstream);
    const stall = first;
    first = false;
    let passwords = 0;
    let keeping = false;
    let upstreamGone = false;
    const kept: Buffer[] = [];
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', () => upstream.destroy());
    upstream.on('close', () => {
      upstreamGone = true;
      if (!keeping) client.destroy();
    });
    upstream.on('data', (d: Buffer) => {
      if (!keeping) return void client.write(d);
      kept.push(d);
      if (kept.length === 1) onStalled();
    });
    client.on('data', (d: Buffer) => {
      // SCRAM's two password messages ('p'); after the second, the server's answer is kept.
      if (stall && d[0] === 0x70 && ++passwords === 2) {
        keeping = true;
        release = () => {
          keeping = false;
          client.write(Buffer.concat(kept.splice(0)));
          if (upstreamGone) client.end();
        };
      }
      upstream.write(d);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stalled,
    release: () => release(),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
