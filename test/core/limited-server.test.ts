import type { Server } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listenLimited, type ServerLimits } from '../../src/core/limited-server.js';

const LIMITS: ServerLimits = {
  maxConnections: 8,
  idleTimeoutMs: 200,
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 4_000,
  keepAliveTimeoutMs: 1_000,
  maxHeaderBytes: 8 * 1024,
};

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Connects, sends `request` (nothing when undefined) and resolves with what came back before the server closed. */
function exchange(url: string, request: string | undefined): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let got = '';
    socket.on('data', (d) => {
      got += d.toString();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    if (request !== undefined) socket.write(request);
  });
}

describe('listenLimited', () => {
  it('delivers a response that takes longer to make than the idle timeout: the wait is the server’s, not the client’s', async () => {
    const started = await listenLimited(LIMITS, { port: 0, host: '127.0.0.1' }, async (_req, res) => {
      await sleep(5 * LIMITS.idleTimeoutMs);
      res.setHeader('connection', 'close');
      res.end('made slowly');
    });
    server = started.server;
    const got = await exchange(started.url, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 200 /);
    expect(got).toContain('made slowly');
  });

  it('still closes a connection that says nothing, after the idle timeout', async () => {
    const started = await listenLimited(LIMITS, { port: 0, host: '127.0.0.1' }, (_req, res) => res.end('never'));
    server = started.server;
    const t = Date.now();
    expect(await exchange(started.url, undefined)).toBe('');
    expect(Date.now() - t).toBeLessThan(LIMITS.headersTimeoutMs);
  });
});
