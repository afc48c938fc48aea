import { readFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { afterIoPoll } from '../../src/core/event-loop.js';

/** Busy for `ms` on the main thread, as a manifest's parse is. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('afterIoPoll', () => {
  let server: ReturnType<typeof createServer>;
  let client: Socket;
  let peer: Socket;
  beforeAll(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    peer = await accepted;
  });
  afterAll(async () => {
    client.destroy();
    peer.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  /**
   * After an I/O callback (the read before a parse), data sent to this process during a busy
   * stretch: was it handled when `wait` resolved?
   */
  async function handledAfter(wait: () => Promise<void>): Promise<boolean> {
    let handled = false;
    peer.once('data', () => {
      handled = true;
    });
    await readFile(fileURLToPath(import.meta.url));
    client.write('answer');
    busy(20);
    await wait();
    return handled;
  }

  it('resolves only after the data that arrived during a busy stretch was handled', async () => {
    expect(await handledAfter(afterIoPoll)).toBe(true);
  });

  it('where one immediate, right after the I/O callback, comes before the poll that sees it', async () => {
    // The reason afterIoPoll takes two: this is what a single setImmediate does.
    expect(await handledAfter(() => nextTurn())).toBe(false);
    await afterIoPoll();
  });
});
