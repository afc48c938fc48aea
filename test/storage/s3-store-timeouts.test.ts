import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { S3Store } from '../../src/storage/s3/s3-store.js';
import { S3_CREDENTIALS } from '../support/s3.js';

/**
 * A store that takes a request and never answers (a stalled proxy, a black-holed connection)
 * must fail the request, not hold it for ever: a watcher waits for its inputs in flight before
 * it stops, so one such request kept it from ever stopping.
 */
describe('the S3 store against a server that never answers', () => {
  const sockets: Socket[] = [];
  let server: Server | undefined;
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  it('fails the request once its socket stays silent, instead of waiting for ever', async () => {
    server = createServer((socket) => {
      sockets.push(socket);
      socket.resume(); // reads the request, answers nothing
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const store = new S3Store({
      bucket: 'b',
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      credentials: S3_CREDENTIALS,
      timeouts: { connectMs: 1000, idleMs: 300 },
    });
    try {
      const outcome = await Promise.race([
        store.get('k').then(
          () => 'answered',
          () => 'failed',
        ),
        new Promise((r) => setTimeout(() => r('still waiting'), 15_000)),
      ]);
      expect(outcome).toBe('failed');
    } finally {
      store.close();
    }
  }, 30_000);
});
