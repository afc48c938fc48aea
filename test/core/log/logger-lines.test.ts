import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/core/log/logger.js';
import { rememberSecret } from '../../../src/core/log/redact.js';

/** The exact lines createLogger's pino logger writes (its `time` set to 0). */

function capture(): { stream: PassThrough; lines: () => string[] } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return {
    stream,
    lines: () =>
      Buffer.concat(chunks)
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace(/"time":\d+/, '"time":0')),
  };
}

describe('createLogger writes redacted pino lines', () => {
  it('a warning at `warn`: the same redacted JSON line (fixed paths, deep keys, live secrets, URLs in fields, message and arguments)', () => {
    rememberSecret('LIVE-SECRET-VALUE-1');
    const out = capture();
    const log = createLogger({ level: 'warn', destination: out.stream });
    log.info({ a: 1 }, 'quiet');
    log.warn(
      {
        route: 'token',
        client_secret: 'S3CR3T-123456',
        access_token: 'tok-123456789',
        headers: { authorization: 'Bearer abc.def' },
        nested: { refreshToken: 'r' },
        url: 'https://x.example.com/a?sig=1',
        note: 'echoed LIVE-SECRET-VALUE-1',
      },
      'token request to %s failed: Bearer abc.def',
      'https://x.example.com/b?sig=2',
    );
    expect(out.lines()).toEqual([
      '{"level":40,"time":0,"route":"token","client_secret":"[redacted]","access_token":"[redacted]","headers":{"authorization":"[redacted]"},"nested":{"refreshToken":"[redacted]"},"url":"https://x.example.com/a?[redacted]","note":"echoed [redacted]","msg":"token request to https://x.example.com/b?[redacted] failed: Bearer [redacted]"}',
    ]);
  });

  it("a child's bindings appear on its lines, made before or after the first line", () => {
    const out = capture();
    const log = createLogger({ level: 'warn', destination: out.stream });
    const before = log.child({ route: 'orders' });
    before.info('quiet');
    before.warn('a child warns');
    log.child({ route: 'later' }).child({ job: 7 }).error('a grandchild errs');
    expect(out.lines()).toEqual([
      '{"level":40,"time":0,"route":"orders","msg":"a child warns"}',
      '{"level":50,"time":0,"route":"later","job":7,"msg":"a grandchild errs"}',
    ]);
  });

  it("levels as pino's: settable, a child follows its parent's unless given its own, isLevelEnabled", () => {
    const out = capture();
    const log = createLogger({ level: 'warn', destination: out.stream });
    expect([log.level, log.isLevelEnabled('warn'), log.isLevelEnabled('info'), log.isLevelEnabled('nope')]).toEqual([
      'warn',
      true,
      false,
      false,
    ]);
    const follows = log.child({ c: 'follows' });
    const own = log.child({ c: 'own' }, { level: 'info' });
    log.level = 'debug';
    expect([follows.level, own.level, follows.isLevelEnabled('debug')]).toEqual(['debug', 'info', true]);
    follows.debug('follows debug');
    own.debug('own debug: dropped');
    own.info('own info');
    log.level = 'error';
    follows.warn('follows warn: dropped');
    expect(() => {
      log.level = 'loud';
    }).toThrow('unknown level loud');
    expect(out.lines()).toEqual([
      '{"level":20,"time":0,"c":"follows","msg":"follows debug"}',
      '{"level":30,"time":0,"c":"own","msg":"own info"}',
    ]);
  });

  it("anything else of pino's is pino's own (the type stays pino's Logger)", () => {
    const log = createLogger({ level: 'warn', destination: new PassThrough() });
    const child = log.child({ route: 'r' });
    expect(child.bindings()).toEqual({ route: 'r' });
    expect(log.levelVal).toBe(40);
    expect(typeof log.flush).toBe('function');
  });
});
