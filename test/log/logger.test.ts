import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { redactDeep, redactUrl, redactUrlsInText } from '../../src/log/redact.js';

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('redactUrl', () => {
  it('drops the query string of a signed URL and keeps the rest', () => {
    expect(redactUrl('https://cdn.example.com/art/front.png?X-Amz-Signature=abc123&X-Amz-Expires=900')).toBe(
      'https://cdn.example.com/art/front.png?[redacted]',
    );
    expect(redactUrl('https://cdn.example.com/a.png#frag')).toBe('https://cdn.example.com/a.png');
    expect(redactUrl('https://cdn.example.com/a.png')).toBe('https://cdn.example.com/a.png');
  });

  it('finds URLs inside free text', () => {
    expect(redactUrlsInText('could not fetch https://x.example.com/a?sig=SECRETSIG, giving up')).toBe(
      'could not fetch https://x.example.com/a?[redacted], giving up',
    );
  });
});

describe('redactDeep', () => {
  it('replaces sensitive keys at any depth and spelling', () => {
    const out = redactDeep({
      a: { client_secret: 's', clientSecret: 's', access_token: 't', refreshToken: 't', Authorization: 'Bearer t' },
      list: [{ token: 't', keep: 'k' }],
      n: 1,
    });
    expect(JSON.stringify(out)).not.toMatch(/"s"|"t"|Bearer/);
    expect(out).toMatchObject({ list: [{ keep: 'k' }], n: 1 });
  });

  it('survives cycles', () => {
    const o: Record<string, unknown> = { name: 'x' };
    o.self = o;
    expect(redactDeep(o)).toEqual({ name: 'x', self: '[circular]' });
  });
});

describe('createLogger', () => {
  it('never writes secrets, tokens or signed query strings', () => {
    const out = capture();
    const log = createLogger({ level: 'debug', destination: out.stream });
    const secret = 'S3CR3T-value-123';
    const token = 'eyJ.token.value';
    log.info(
      { client_secret: secret, headers: { authorization: `Bearer ${token}` }, nested: { accessToken: token } },
      'one',
    );
    log.info(
      { url: 'https://cdn.example.com/f.png?X-Amz-Signature=SIGVALUE' },
      'fetching https://cdn.example.com/f.png?X-Amz-Signature=SIGVALUE',
    );
    log.error({ err: Object.assign(new Error('boom'), { token }) }, 'failed');
    const text = out.text();
    expect(text).toContain('"msg":"one"');
    expect(text).toContain('https://cdn.example.com/f.png');
    expect(text).toContain('boom');
    for (const leaked of [secret, token, 'SIGVALUE']) expect(text).not.toContain(leaked);
  });

  it('respects the level', () => {
    const out = capture();
    const log = createLogger({ level: 'warn', destination: out.stream });
    log.info('quiet');
    log.warn('loud');
    expect(out.text()).not.toContain('quiet');
    expect(out.text()).toContain('loud');
  });

  it('pretty output is redacted too', () => {
    const out = capture();
    const log = createLogger({ level: 'info', pretty: true, destination: out.stream });
    log.info({ client_secret: 'PRETTYSECRET' }, 'see https://x.example.com/a?sig=PRETTYSIG');
    const text = out.text();
    expect(text).toContain('see https://x.example.com/a');
    expect(text).not.toContain('PRETTYSECRET');
    expect(text).not.toContain('PRETTYSIG');
  });
});
