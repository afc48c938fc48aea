import { mkdtempSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openApiSession } from '../../../src/app/api-session.js';
import { runWatch } from '../../../src/app/watch-daemon.js';
import { resolveSettings } from '../../../src/core/config/resolve-settings.js';
import { sandboxEnv } from '../../../src/core/config/sandbox-config.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { usageMessage } from '../../support/usage-error.js';

let dir: string;
let home: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'htorder-settings-'));
  home = mkdtempSync(join(tmpdir(), 'htorder-home-'));
});

const WATCH_PROFILE = `
profiles:
  daemon:
    healthPort: 9464
    healthHost: 0.0.0.0
    lockStaleMs: 45000
    leaseMs: 60000
    s3Endpoint: http://minio:9000/
    s3ForcePathStyle: true
    s3Region: eu-west-1
    logLevel: debug
    processingDir: claimed
  typo:
    s3ForcePathStyle: ture
  slow:
    lockStaleMs: 1s
`;

describe('watch, S3, health, lock and log settings from a profile', () => {
  it('a profile sets them, typed and normalised', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), WATCH_PROFILE);
    const s = resolveSettings({ env: { HTORDER_PROFILE: 'daemon' }, cwd: dir, home });
    expect(s.get('healthPort')).toBe(9464);
    expect(s.get('healthHost')).toBe('0.0.0.0');
    expect(s.get('lockStaleMs')).toBe(45_000);
    expect(s.get('leaseMs')).toBe(60_000);
    expect(s.get('s3Endpoint')).toBe('http://minio:9000');
    expect(s.get('s3ForcePathStyle')).toBe(true);
    expect(s.get('s3Region')).toBe('eu-west-1');
    expect(s.get('logLevel')).toBe('debug');
    expect(s.get('processingDir')).toBe('claimed');
    expect(s.raw('healthPort')?.layer).toBe('profile');
  });

  it('flag beats profile, profile beats environment, environment beats default', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), WATCH_PROFILE);
    const env = {
      HTORDER_PROFILE: 'daemon',
      HTORDER_HEALTH_PORT: '1111',
      HTORDER_LOCK_STALE_MS: '3000',
      HTORDER_SCAN_INTERVAL_MS: '500',
      HTORDER_S3_FORCE_PATH_STYLE: 'false',
    };
    const s = resolveSettings({ env, flags: { healthPort: '2222' }, cwd: dir, home });
    expect(s.get('healthPort')).toBe(2222); // flag
    expect(s.get('lockStaleMs')).toBe(45_000); // profile over env
    expect(s.get('s3ForcePathStyle')).toBe(true); // profile over env
    expect(s.get('scanIntervalMs')).toBe(500); // env: the profile does not set it
    expect(s.get('retryMaxMs')).toBe(300_000); // default
    expect(s.explicit('retryMaxMs')).toBeUndefined();
    expect(s.get('healthHost')).toBe('0.0.0.0');
  });

  it('without the profile, the environment; without either, the default (or nothing)', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), WATCH_PROFILE);
    const s = resolveSettings({ env: { HTORDER_HEALTH_PORT: '1111', HTORDER_LOCK_STALE_MS: '3000' }, cwd: dir, home });
    expect(s.get('healthPort')).toBe(1111);
    expect(s.get('lockStaleMs')).toBe(3000);
    expect(s.get('s3Endpoint')).toBeUndefined();
    expect(s.get('healthHost')).toBe('127.0.0.1');
    expect(s.get('logLevel')).toBe('warn');
    expect(resolveSettings({ env: {}, cwd: dir, home, defaults: { logLevel: 'info' } }).get('logLevel')).toBe('info');
  });

  it('"ture" in a profile is refused, naming the key, the profile and the file', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), WATCH_PROFILE);
    const s = resolveSettings({ env: {}, flags: { profile: 'typo' }, cwd: dir, home });
    expect(usageMessage(() => s.get('s3ForcePathStyle'))).toBe(
      `s3ForcePathStyle of profile "typo" in ${join(dir, 'htorder.config.yaml')} must be true or false, got "ture"`,
    );
  });

  it('"ture" in the environment is refused, not read as false', () => {
    const s = resolveSettings({ env: { HTORDER_S3_FORCE_PATH_STYLE: 'ture' }, cwd: dir, home });
    expect(usageMessage(() => s.get('s3ForcePathStyle'))).toBe(
      'HTORDER_S3_FORCE_PATH_STYLE must be true or false, got "ture"',
    );
  });

  it('a lock staleness out of its limits names the profile key', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), WATCH_PROFILE);
    const s = resolveSettings({ env: { HTORDER_PROFILE: 'slow' }, cwd: dir, home });
    expect(usageMessage(() => s.get('lockStaleMs'))).toMatch(
      /^lockStaleMs of profile "slow" in .* must be a whole number of milliseconds from 2000/,
    );
    expect(
      usageMessage(() =>
        resolveSettings({ env: { HTORDER_LOCK_STALE_MS: '1999' }, cwd: dir, home }).get('lockStaleMs'),
      ),
    ).toContain('HTORDER_LOCK_STALE_MS');
  });

  it('a watch key of the wrong YAML type is refused when the file is read', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), 'profiles: { p: { healthPort: [1] } }\n');
    expect(usageMessage(() => resolveSettings({ env: {}, flags: { profile: 'p' }, cwd: dir, home }))).toContain(
      '"healthPort"',
    );
  });
});

const quiet = new Writable({ write: (_c, _e, cb) => cb() });

describe('the same limits with or without --sandbox', () => {
  it.each([[{}], [{ sandbox: true }]])('concurrency 300 is refused %o', async (extra) => {
    const env = {
      HTORDER_CONCURRENCY: '300',
      HTORDER_LOG_LEVEL: 'silent',
      HTORDER_BASE_URL: 'https://api.example.com',
      HTORDER_AUTH_URL: 'https://auth.example.com',
      HTORDER_REALM: 'r',
      HTORDER_CLIENT_ID: 'c',
      HTORDER_CLIENT_SECRET: 's',
    };
    await expect(openApiSession({ ...extra, flags: {}, env, cwd: dir, stderr: quiet })).rejects.toThrow(
      'HTORDER_CONCURRENCY must be a whole number from 1 to 256, got "300"',
    );
  });

  it('--sandbox takes the settings of the environment, and of a profile all but its account', async () => {
    writeFileSync(
      join(dir, 'htorder.config.yaml'),
      'profiles:\n  shop:\n    baseUrl: https://api.us.example.com\n    clientId: real-id\n    maxJobCost: 500\n',
    );
    const session = await openApiSession({
      sandbox: true,
      flags: {},
      env: { HTORDER_PROFILE: 'shop', HTORDER_CONCURRENCY: '3', HTORDER_LOG_LEVEL: 'silent' },
      cwd: dir,
      stderr: quiet,
    });
    try {
      expect(session.config.concurrency).toBe(3);
      expect(session.settings.get('maxJobCost')).toBe(500);
      expect(session.config.clientId).toBe('us-demo');
      expect(session.config.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/us\/api$/);
    } finally {
      await session.close();
    }
  });

  it('--sandbox with a profile that does not exist is an error naming what selected it', async () => {
    await expect(
      openApiSession({ sandbox: true, flags: {}, env: { HTORDER_PROFILE: 'nowhere' }, cwd: dir, stderr: quiet }),
    ).rejects.toThrow('profile "nowhere" (HTORDER_PROFILE) not found');
  });
});

describe('watch reads its settings from a profile', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('health port and processing folder from the profile, the account from the environment', async () => {
    const drop = await mkdtemp(join(tmpdir(), 'htorder-settings-drop-'));
    const controller = new AbortController();
    try {
      await writeFile(
        join(dir, 'htorder.config.yaml'),
        [
          'profiles:',
          '  daemon:',
          '    healthPort: 0',
          '    processingDir: claimed',
          '    scanIntervalMs: 50',
          '    logLevel: silent',
          '',
        ].join('\n'),
      );
      const env = { ...sandboxEnv(sandbox), HTORDER_STATE_DIR: join(dir, 'state'), HTORDER_PROFILE: 'daemon' };
      let healthUrl: string | undefined;
      let ready!: () => void;
      const readyP = new Promise<void>((resolve) => (ready = resolve));
      const done = runWatch(
        { target: drop, flags: {} },
        {
          stderr: quiet,
          env,
          cwd: dir,
          signal: controller.signal,
          onReady: (info) => {
            healthUrl = info.healthUrl;
            ready();
          },
        },
      );
      try {
        await Promise.race([readyP, done.then((code) => Promise.reject(new Error(`watch ended early with ${code}`)))]);
        expect(healthUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const res = await fetch(`${healthUrl}/healthz`);
        expect(res.status).toBe(200);
        expect(await readdir(drop)).toContain('claimed');
      } finally {
        controller.abort();
        expect(await done).toBe(0);
      }
    } finally {
      await rm(drop, { recursive: true, force: true });
    }
  });
});
