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
