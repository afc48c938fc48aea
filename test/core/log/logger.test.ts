import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/core/log/logger.js';
import { redactDeep, redactUrl, redactUrlsInText, scrubServerText } from '../../../src/core/log/redact.js';

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

describe('scrubServerText', () => {
  it('changes text exactly as the full replaces do: its quick checks skip only text they cannot change', () => {
    // The patterns as redact.ts has them, applied without the quick checks before them.
    const bearer = /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*/gi;
    const pair =
      /(["']?(?:access_token|refresh_token|id_token|client_secret|clientSecret|password|authorization|api[_-]?key)["']?\s*[:=]\s*["']?)([^"'\s,&}]+)/gi;
    const url = /\bhttps?:\/\/[^\s"'<>]+/gi;
    const full = (text: string): string =>
      text
        .replace(bearer, '$1 [redacted]')
        .replace(pair, '$1[redacted]')
        .replace(url, (u) => {
          const tail = /[.,;:!)\]]+$/.exec(u)?.[0] ?? '';
          const body = u.slice(0, u.length - tail.length);
          return body.includes('?') ? `${redactUrl(body)}${tail}` : redactUrl(u);
        });
    const piece = fc.constantFrom(
      'Bearer ',
      'basic ',
      'BEARER\t',
      'TOKEN',
      'access_token',
      'Refresh_Token',
      '"client_secret": "',
      'clientSecret=',
      'PASSWORD:',
      'Authorization: ',
      'api-key=',
      'API_KEY',
      'apikey',
      'https://',
      'HTTP://',
      'http:/',
      'x.example.com/a',
      '?sig=1',
      '#f',
      ' ',
      ',',
      '.',
      '"',
      "'",
      '=',
      ':',
      'abc',
      'Zm9v==',
      '/',
      'ü',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(scrubServerText(text)).toBe(full(text));
      }),
      { numRuns: 2000 },
    );
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
