import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/log/logger.js';
import { rememberSecret, scrubSecrets } from '../../src/core/log/redact.js';
import { WebhookSender } from '../../src/watch/notify/webhook-sender.js';
import { startLoopback } from '../support/loopback-server.js';
import { sink } from '../support/sink.js';
import { waitFor } from '../support/watch-harness.js';

/**
 * A webhook's URL is a credential (Slack's token is its last path segment). A receiver that
 * answers with the path it was asked for — a proxy's "no such route", a deleted hook — must not
 * get the token, or any of the path's secret parts, into the warn-level log line that says why
 * the notification was refused.
 */
const TEAM = 'T0ABCDEFG';
const HOOK = 'B0HIJKLMN';
const TOKEN = 'aBcDeFgHiJkLmNoPqRsTuVwX';
const PATH = `/services/${TEAM}/${HOOK}/${TOKEN}`;

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function refusedWith(body: (path: string) => string): Promise<string> {
  const server = await startLoopback((req, res) => {
    res.writeHead(404).end(body(req.url));
  });
  servers.push(server);
  const out = sink();
  const sender = new WebhookSender(
    `${server.url}${PATH}`,
    'ops',
    createLogger({ level: 'warn', destination: out.stream }),
  );
  sender.send({ text: 'failed: a.csv' }, 'failed: a.csv');
  await waitFor(() => (out.text().includes('refused') ? true : undefined), 'the refusal in the log');
  await sender.close(1000);
  return out.text();
}

describe('webhook answers that echo the request path', () => {
  it('the path, the token and the team and hook ids never reach the log', async () => {
    const text = await refusedWith((path) => `no_service: nothing at ${path} (hook ${path.split('/')[4]})`);
    expect(text).toContain('notification refused by the webhook');
    expect(text).toContain('[redacted]');
    for (const secret of [TOKEN, TEAM, HOOK]) expect(text).not.toContain(secret);
  });

  it('an answer cut short inside an echoed token keeps no part of it', async () => {
    // The first 300 characters are read: 44 of padding, four whole echoes, then a fifth up to the
    // token's sixth character. Scrubbed, the whole echoes shrink, and the cut one would be logged.
    const text = await refusedWith((path) => `${'x'.repeat(43)} ${`${path} `.repeat(4)}${path}`);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(TOKEN.slice(0, 6));
  });

  it('the webhook stays scrubbed however many tokens the process is handed afterwards', async () => {
    await refusedWith(() => 'gone');
    for (let n = 0; n < 100; n++) rememberSecret(`access-token-number-${n}`);
    expect(scrubSecrets(`hook ${TOKEN} of ${TEAM}`)).toBe('hook [redacted] of [redacted]');
    expect(scrubSecrets('the services and webhooks words stay')).toBe('the services and webhooks words stay');
  });
});
