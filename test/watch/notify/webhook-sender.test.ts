import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/core/log/logger.js';
import { WebhookSender } from '../../../src/watch/notify/webhook-sender.js';
import { startLoopback, type SeenRequest } from '../../support/loopback-server.js';
import { sink } from '../../support/sink.js';
import { waitFor } from '../../support/watch-harness.js';

/** A Slack-like path: the token is in the path, so the whole URL is a secret. */
const TOKEN_PATH = '/services/T0001/B0002/Zx9SecretToken42';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function receiver(reply: (n: number, req: SeenRequest, res: ServerResponse) => void) {
  let n = 0;
  const server = await startLoopback((req, res) => reply(++n, req, res));
  servers.push(server);
  return server;
}

function logged() {
  const out = sink();
  return { logger: createLogger({ level: 'debug', destination: out.stream }), text: out.text };
}

const FAST = { baseDelayMs: 20, maxDelayMs: 100, random: () => 0.5 };

describe('webhook sender', () => {
  it('tries again after a 500, then delivers: the same body twice, once accepted', async () => {
    const server = await receiver((n, _req, res) => {
      res.writeHead(n === 1 ? 500 : 200).end(n === 1 ? 'oops' : 'ok');
    });
    const log = logged();
    const sender = new WebhookSender(`${server.url}${TOKEN_PATH}`, 'ops', log.logger, FAST);
    sender.send({ text: 'one' }, 'failed: a.csv');
    await waitFor(() => (server.seen.length === 2 ? true : undefined), 'the second POST');
    await sender.close(1000);
    expect(server.seen.map((r) => JSON.parse(r.body))).toEqual([{ text: 'one' }, { text: 'one' }]);
    expect(server.seen[0]?.headers['content-type']).toMatch(/^application\/json/);
    expect(log.text()).toContain('notification delivered');
    expect(log.text()).not.toContain(TOKEN_PATH);
    expect(log.text()).not.toContain('Zx9SecretToken42');
  });

  it("waits a 429's Retry-After (in seconds) rather than its own backoff", async () => {
    const server = await receiver((n, _req, res) => {
      if (n === 1) res.writeHead(429, { 'retry-after': '0' }).end();
      else res.writeHead(200).end();
    });
    const log = logged();
    // A backoff of a minute: only the Retry-After of 0 lets the second try come quickly.
    const sender = new WebhookSender(`${server.url}/hook`, 'ops', log.logger, {
      baseDelayMs: 60_000,
      maxDelayMs: 60_000,
    });
    sender.send({ n: 1 }, 'x');
    await waitFor(() => (server.seen.length === 2 ? true : undefined), 'the retry after Retry-After: 0');
    await sender.close(1000);
  });

  it('does not retry an answer that will not change (404: the webhook was deleted), and says so', async () => {
    const server = await receiver((_n, _req, res) => res.writeHead(404).end('no_service'));
    const log = logged();
    const sender = new WebhookSender(`${server.url}${TOKEN_PATH}`, 'ops', log.logger, FAST);
    sender.send({ n: 1 }, 'failed: a.csv');
    sender.send({ n: 2 }, 'failed: b.csv');
    await waitFor(() => (server.seen.length === 2 ? true : undefined), 'both POSTs');
    await sender.close(1000);
    expect(server.seen.map((r) => JSON.parse(r.body))).toEqual([{ n: 1 }, { n: 2 }]);
    expect(log.text()).toContain('notification refused by the webhook');
    expect(log.text()).toContain('HTTP 404: no_service');
    expect(log.text()).not.toContain('Zx9SecretToken42');
  });

  it('keeps at most maxQueue messages: the oldest is dropped, with a log line', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const server = await receiver((_n, _req, res) => {
      void held.then(() => res.writeHead(200).end());
    });
    const log = logged();
    const sender = new WebhookSender(`${server.url}/hook`, 'ops', log.logger, { ...FAST, maxQueue: 2 });
    sender.send({ n: 1 }, 'm1'); // in flight (held)
    await waitFor(() => (server.seen.length === 1 ? true : undefined), 'the first POST');
    sender.send({ n: 2 }, 'm2');
    sender.send({ n: 3 }, 'm3');
    sender.send({ n: 4 }, 'm4'); // queue full (2 waiting): m2 goes
    release();
    await waitFor(() => (server.seen.length === 3 ? true : undefined), 'the rest');
    await sender.close(1000);
    expect(server.seen.map((r) => (JSON.parse(r.body) as { n: number }).n)).toEqual([1, 3, 4]);
    expect(log.text()).toContain('notification queue full: dropped the oldest notification');
    expect(log.text()).toContain('"dropped":"m2"');
  });

  it('a POST that gets no answer is cut by the per-request timeout and tried again', async () => {
    const server = await receiver(() => undefined); // never answers
    const log = logged();
    const sender = new WebhookSender(`${server.url}${TOKEN_PATH}`, 'ops', log.logger, {
      ...FAST,
      timeoutMs: 100,
      maxAttempts: 2,
    });
    sender.send({ n: 1 }, 'm1');
    await waitFor(() => (log.text().includes('giving up') ? true : undefined), 'both tries to time out');
    await sender.close(1000);
    expect(server.seen).toHaveLength(2);
    expect(log.text()).toContain('"problem":"timed out"');
    expect(log.text()).not.toContain('Zx9SecretToken42');
  });

  it('send never waits on the receiver, and close gives up after its bound instead of waiting out a hung POST', async () => {
    const server = await receiver(() => undefined); // never answers
    const log = logged();
    // A per-request timeout far beyond the test's own: only close's bound can end this.
    const sender = new WebhookSender(`${server.url}/hook`, 'ops', log.logger, { ...FAST, timeoutMs: 600_000 });
    for (let i = 0; i < 5; i++) sender.send({ i }, `m${i}`);
    await waitFor(() => (server.seen.length === 1 ? true : undefined), 'the first POST, held by the receiver');
    await sender.close(200);
    expect(log.text()).toContain('stopping: notifications not delivered in time were dropped');
    expect(log.text()).toContain('"unsent":5');
  });
});
