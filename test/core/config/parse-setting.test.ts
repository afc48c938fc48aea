import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/core/errors.js';
import {
  parseBoolean,
  parseEnum,
  parseHost,
  parseInteger,
  parsePath,
  parsePort,
  parseSettingValue,
  parseString,
  parseUrl,
} from '../../../src/core/config/parse-setting.js';
import { LOG_LEVELS, SETTINGS, SETTING_NAMES, setting } from '../../../src/core/config/settings.js';
import { isLogLevel } from '../../../src/core/log/logger.js';
import { runCli } from '../../../src/cli/program.js';
import { captureStdio } from '../../support/capture-stdio.js';
import { usageMessage } from '../../support/usage-error.js';

const PATHS = { baseDir: '/work', home: '/home/me' };

describe('boolean', () => {
  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['yes', true],
    ['Yes', true],
    [true, true],
    ['false', false],
    ['False', false],
    ['0', false],
    ['no', false],
    ['NO', false],
    [false, false],
    [' true ', true],
  ] as const)('%j is %s', (raw, value) => {
    expect(parseBoolean(raw, 'HTORDER_X')).toBe(value);
  });

  it.each(['ture', 'on', 'off', 'y', '2', 'enabled', 'truee'])('%j is refused, naming the setting', (raw) => {
    expect(usageMessage(() => parseBoolean(raw, 'HTORDER_S3_FORCE_PATH_STYLE'))).toBe(
      `HTORDER_S3_FORCE_PATH_STYLE must be true or false, got "${raw}"`,
    );
  });
});

describe('integer and milliseconds', () => {
  it('takes digits within the limits, from text or a YAML number', () => {
    expect(parseInteger('8', '--concurrency', 1, 256)).toBe(8);
    expect(parseInteger(256, '--concurrency', 1, 256)).toBe(256);
    expect(parseSettingValue(SETTINGS.lockStaleMs.type, ' 2000 ', 'HTORDER_LOCK_STALE_MS', PATHS)).toBe(2000);
  });

  it.each(['0', '257', 'eight', '2.5', '-1', '8x', '', '1e3'])('concurrency %j is refused with its limits', (raw) => {
    expect(usageMessage(() => parseInteger(raw, 'HTORDER_CONCURRENCY', 1, 256))).toBe(
      `HTORDER_CONCURRENCY must be a whole number from 1 to 256, got "${raw.trim()}"`,
    );
  });

  it.each(['1999', '10s', '2000.5'])('lock staleness %j is refused', (raw) => {
    expect(
      usageMessage(() => parseSettingValue(SETTINGS.lockStaleMs.type, raw, 'HTORDER_LOCK_STALE_MS', PATHS)),
    ).toMatch(/^HTORDER_LOCK_STALE_MS must be a whole number of milliseconds from 2000 to 86400000, got "/);
  });
});

describe('length of time', () => {
  const type = SETTINGS.duplicateWindow.type;
  it.each([
    ['12h', 12 * 3_600_000],
    [' 7d ', 7 * 86_400_000],
    ['1d12h', 36 * 3_600_000],
    ['90m', 90 * 60_000],
    ['0', 0],
    [0, 0],
    ['366d', 366 * 86_400_000],
  ] as const)('%j is %d ms', (raw, ms) => {
    expect(parseSettingValue(type, raw, 'HTORDER_DUPLICATE_WINDOW', PATHS)).toBe(ms);
  });

  it.each(['12', '-1h', '+1h', '1.5d', '2 days', '367d', 'soon', ''])('%j is refused, naming the setting', (raw) => {
    expect(usageMessage(() => parseSettingValue(type, raw, 'HTORDER_DUPLICATE_WINDOW', PATHS))).toBe(
      'HTORDER_DUPLICATE_WINDOW must be a length of time such as 12h, 36h or 7d (units ms, s, m, h, d), or 0, ' +
        `at most 366d, got "${raw.trim()}"`,
    );
  });
});

describe('port, host, URL, enum, text, path', () => {
  it('port: 0 to 65535', () => {
    expect(parsePort('0', '--health-port')).toBe(0);
    expect(parsePort(9464, '--health-port')).toBe(9464);
    expect(usageMessage(() => parsePort('65536', 'HTORDER_HEALTH_PORT'))).toBe(
      'HTORDER_HEALTH_PORT must be a port number from 0 to 65535, got "65536"',
    );
    expect(usageMessage(() => parsePort('http', '--health-port'))).toContain('--health-port');
  });

  it('host: a name or an address, without scheme or port', () => {
    expect(parseHost('0.0.0.0', '--health-host')).toBe('0.0.0.0');
    expect(parseHost('::', '--health-host')).toBe('::');
    expect(parseHost('[::1]', '--health-host')).toBe('::1');
    expect(parseHost('metrics.internal', '--health-host')).toBe('metrics.internal');
    for (const bad of ['http://x', 'host name', '0.0.0.0:9464x', '']) {
      expect(usageMessage(() => parseHost(bad, 'HTORDER_HEALTH_HOST'))).toContain('HTORDER_HEALTH_HOST');
    }
  });

  it('URL: absolute http(s), trailing slash dropped, no query or credentials', () => {
    expect(parseUrl('http://minio:9000/', 'HTORDER_S3_ENDPOINT')).toBe('http://minio:9000');
    expect(usageMessage(() => parseUrl('minio:9000', '--s3-endpoint'))).toMatch(/^--s3-endpoint: "minio:9000"/);
    expect(usageMessage(() => parseUrl('ftp://x.example.com', 'HTORDER_S3_ENDPOINT'))).toContain('http(s)');
    expect(usageMessage(() => parseUrl('https://u:p@x.example.com', 'HTORDER_BASE_URL'))).toContain('credentials');
  });

  it('enum: one of the values, exactly', () => {
    expect(parseEnum('debug', '--log-level', ['info', 'debug'])).toBe('debug');
    expect(usageMessage(() => parseEnum('verbose', 'HTORDER_LOG_LEVEL', ['info', 'debug']))).toBe(
      'HTORDER_LOG_LEVEL must be one of info, debug, got "verbose"',
    );
  });

  it('text: not blank', () => {
    expect(parseString(' ERP ', '--app-name')).toBe('ERP');
    expect(usageMessage(() => parseString('  ', 'appName of profile "p" in /x.yaml'))).toBe(
      'appName of profile "p" in /x.yaml must not be empty',
    );
  });

  it("path: ~ is home, relative is relative to the layer's folder", () => {
    expect(parsePath('~/state', '--state-dir', '/work', '/home/me')).toBe(join('/home/me', 'state'));
    expect(parsePath('state', '--state-dir', '/work', '/home/me')).toBe(join('/work', 'state'));
    expect(parsePath('/abs', '--state-dir', '/work', '/home/me')).toBe('/abs');
  });

  it("the log levels of the table are the logger's", () => {
    for (const level of LOG_LEVELS) expect(isLogLevel(level), level).toBe(true);
    expect(isLogLevel('verbose')).toBe(false);
  });

  it('every setting of the table has a parser for its type', () => {
    const paths = { baseDir: '/work', home: homedir() };
    for (const name of SETTING_NAMES) {
      const d = setting(name).default;
      if (d !== undefined) expect(() => parseSettingValue(SETTINGS[name].type, d, name, paths), name).not.toThrow();
    }
  });
});

describe('through the command line', () => {
  const io = captureStdio();

  it('a bad value exits 2 naming the setting and where it came from', async () => {
    const saved = { ...process.env };
    try {
      for (const k of Object.keys(process.env)) if (k.startsWith('HTORDER_')) delete process.env[k];
      process.env.HTORDER_S3_FORCE_PATH_STYLE = 'ture';
      // --sandbox: no account needed; the S3 settings are read when the bucket is wired.
      expect(await runCli(['watch', '--sandbox', 's3://orders/in/'])).toBe(ExitCode.Usage);
      expect(io.err).toContain('HTORDER_S3_FORCE_PATH_STYLE must be true or false, got "ture"');
    } finally {
      process.env = saved;
    }
  });

  it('a flag is named as the flag', async () => {
    expect(await runCli(['run', '--sandbox', '--concurrency', '300', 'x.yaml'])).toBe(ExitCode.Usage);
    expect(io.err).toContain('--concurrency must be a whole number from 1 to 256, got "300"');
  });
});
