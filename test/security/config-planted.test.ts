import { chmodSync, chownSync, lchownSync, mkdirSync, type Stats, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runPipelineCommand } from '../../src/cli/run-pipeline.js';
import { ownershipProblem } from '../../src/core/config/file-owner.js';
import { apiConfigFrom, resolveConfig } from '../../src/core/config/resolve-config.js';
import { resolveSettings } from '../../src/core/config/resolve-settings.js';
import { UsageError } from '../../src/core/errors.js';
import { startLoopback } from '../support/loopback-server.js';
import { sink } from '../support/sink.js';

/**
 * Issue 13, finding 3: `./htorder.config.yaml` in the working directory overrode the user's
 * config with no check: it could point authUrl at another host, set allowInsecure, name the
 * user's own secret file, and the secret was POSTed to the planted host. A malformed file's
 * YAML error printed its `clientSecret:` line.
 */

const SECRET = 'ultra-secret-value-42';
let dir: string;
let home: string;
let secretFile: string;

function userConfig(extra = ''): void {
  mkdirSync(join(home, '.config', 'htorder'), { recursive: true });
  writeFileSync(
    join(home, '.config', 'htorder', 'config.yaml'),
    `profiles:\n  prod:\n    baseUrl: https://api.us.example.com\n    authUrl: https://auth.us.example.com\n` +
      `    realm: htorder-us\n    clientId: me\n    clientSecretFile: ${secretFile}\n${extra}`,
    { mode: 0o600 },
  );
}

function planted(text: string, mode = 0o600): string {
  const path = join(dir, 'htorder.config.yaml');
  writeFileSync(path, text, { mode });
  chmodSync(path, mode);
  return path;
}

const EVIL = (authUrl: string) =>
  `profiles:\n  prod:\n    baseUrl: https://api.us.example.com\n    authUrl: ${authUrl}\n` +
  `    realm: htorder-us\n    clientId: me\n    allowInsecure: true\n`;

function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error('expected a UsageError');
}

const env = (extra: Record<string, string> = {}) => ({ HTORDER_PROFILE: 'prod', ...extra });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'htorder-planted-'));
  home = await mkdtemp(join(tmpdir(), 'htorder-home-'));
  secretFile = join(home, 'secret');
  writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
});

describe("a working-directory config that is not the user's own is refused (exit 2)", () => {
  it('owned by another user', () => {
    const path = planted('profiles: {}\n');
    chownSync(path, 4242, 4242);
    const message = usage(() => resolveSettings({ env: {}, cwd: dir, home }));
    expect(message).toContain(`refusing config file ${path}: it belongs to uid 4242`);
  });

  it('a symbolic link made by another user, even to a file of ours', () => {
    const target = join(home, 'mine.yaml');
    writeFileSync(target, 'profiles: {}\n', { mode: 0o600 });
    const link = join(dir, 'htorder.config.yaml');
    symlinkSync(target, link);
    lchownSync(link, 4242, 4242);
    expect(usage(() => resolveSettings({ env: {}, cwd: dir, home }))).toContain('symbolic link made by uid 4242');
  });

  it.each([
    ['0620', 0o620],
    ['0602', 0o602],
    ['0666', 0o666],
  ])('writable by group or others (mode %s)', (_, mode) => {
    planted('profiles: {}\n', mode);
    expect(usage(() => resolveSettings({ env: {}, cwd: dir, home }))).toContain('group or others may write it');
  });

  it("is used when it is the user's own and private", () => {
    planted('profiles: { p: { concurrency: 3 } }\n', 0o644);
    expect(resolveSettings({ env: { HTORDER_PROFILE: 'p' }, cwd: dir, home }).get('concurrency')).toBe(3);
  });
});

describe("the user's own config (~/.config/htorder/config.yaml) that is not the user's own is refused (exit 2)", () => {
  const userPath = (): string => join(home, '.config', 'htorder', 'config.yaml');

  it("owned by another user (a dropper's file moved there keeps its owner)", () => {
    userConfig();
    chownSync(userPath(), 4242, 4242);
    const message = usage(() => resolveConfig({ env: env(), cwd: dir, home }));
    expect(message).toContain(`refusing config file ${userPath()}: it belongs to uid 4242`);
    expect(message).toContain('Your own config file can send your secret to another host');
  });

  it.each([
    ['0620', 0o620],
    ['0602', 0o602],
    ['0666', 0o666],
  ])('writable by group or others (mode %s)', (_, mode) => {
    userConfig();
    chmodSync(userPath(), mode);
    expect(usage(() => resolveConfig({ env: env(), cwd: dir, home }))).toContain('group or others may write it');
  });

  it('also when a working-directory config is compared with it', () => {
    userConfig();
    chmodSync(userPath(), 0o666);
    planted('profiles: { prod: { concurrency: 3 } }\n');
    expect(usage(() => resolveSettings({ env: env(), cwd: dir, home }))).toContain(
      `refusing config file ${userPath()}`,
    );
  });

  it("is used when it is the user's own and private", () => {
    userConfig();
    expect(resolveSettings({ env: env(), cwd: dir, home }).get('clientId')).toBe('me');
  });
});

describe('a config file named with --config or HTORDER_CONFIG: trusted, unless any user may have written it', () => {
  const named = (mode: number, folder = dir): string => {
    const path = join(folder, 'named.yaml');
    writeFileSync(path, EVIL('https://auth.other.example.com'), { mode });
    chmodSync(path, mode);
    return path;
  };
  const secret = { HTORDER_CLIENT_SECRET: 'theirs' };
  const FIX =
    'A config file can send your secret to another host; make it a file other users may not write ' +
    '(chmod o-w), in a folder they may not write, or name another file';
  /** A folder every user may write, sticky as /tmp is. */
  const shared = (): string => {
    const folder = join(dir, 'shared');
    mkdirSync(folder);
    chmodSync(folder, 0o1777);
    return folder;
  };

  it.each([
    ['0602', 0o602],
    ['0666', 0o666],
  ])('writable by every user (mode %s): refused, naming the file, its mode and the fix', (text, mode) => {
    const path = named(mode);
    expect(usage(() => resolveConfig({ env: env(secret), flags: { config: path }, cwd: dir, home }))).toBe(
      `refusing config file ${path} (--config): other users may write it (mode ${text}). ${FIX}`,
    );
    expect(usage(() => resolveConfig({ env: env({ ...secret, HTORDER_CONFIG: path }), cwd: dir, home }))).toContain(
      `refusing config file ${path} (HTORDER_CONFIG): other users may write it (mode ${text})`,
    );
  });

  it("another user's file, or link, in a folder every user may write (/tmp): refused as possibly planted", () => {
    const path = named(0o644, shared());
    chownSync(path, 4242, 4242);
    expect(usage(() => resolveConfig({ env: env(secret), flags: { config: path }, cwd: dir, home }))).toBe(
      `refusing config file ${path} (--config): it belongs to uid 4242, in a folder every user may write. ${FIX}`,
    );
    const target = named(0o644);
    const link = join(dir, 'shared', 'link.yaml');
    symlinkSync(target, link);
    lchownSync(link, 4242, 4242);
    expect(usage(() => resolveConfig({ env: env(secret), flags: { config: link }, cwd: dir, home }))).toContain(
      `refusing config file ${link} (--config): it belongs to uid 4242, in a folder every user may write`,
    );
  });

  it('its owner and group are the chooser’s: a group-writable file, or one another user owns in their folder, is used', () => {
    const group = named(0o664);
    expect(resolveConfig({ env: env(secret), flags: { config: group }, cwd: dir, home }).authUrl).toBe(
      'https://auth.other.example.com',
    );
    // A container's mounted config, owned by the host's user; a system config, root's.
    for (const owner of [4242, 0]) {
      const path = named(0o640);
      chownSync(path, owner, owner);
      expect(resolveConfig({ env: env(secret), flags: { config: path }, cwd: dir, home }).authUrl).toBe(
        'https://auth.other.example.com',
      );
    }
    const mine = named(0o644, shared());
    expect(resolveConfig({ env: env(secret), flags: { config: mine }, cwd: dir, home }).authUrl).toBe(
      'https://auth.other.example.com',
    );
  });

  it("root's file is trusted as the user's own (a system config: /etc/htorder/config.yaml, root:htorder 0640), not when others may write it", () => {
    const path = named(0o640);
    const own = statSync(path);
    const asRoot = Object.assign(Object.create(own) as Stats, { uid: 0, mode: 0o100640 });
    expect(ownershipProblem(asRoot, asRoot, 1000)).toBeUndefined();
    expect(ownershipProblem(Object.assign(Object.create(own) as Stats, { uid: 0, mode: 0o100660 }), asRoot, 1000)).toBe(
      'group or others may write it (mode 0660)',
    );
    expect(ownershipProblem(Object.assign(Object.create(own) as Stats, { uid: 1001 }), asRoot, 1000)).toBe(
      'it belongs to uid 1001, not to you (uid 1000)',
    );
  });

  it('end to end: run refuses a world-writable named config (exit 2) and its host never sees the secret', async () => {
    const evil = await startLoopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"access_token":"x","expires_in":300}');
    });
    try {
      const path = named(0o666);
      writeFileSync(path, `${EVIL(evil.url)}    clientSecretFile: ${secretFile}\n`);
      writeFileSync(join(dir, 'orders.yaml'), 'version: 1\njobs: []\n');
      const running = runPipelineCommand(
        { command: 'run', files: [join(dir, 'orders.yaml')], flags: { config: path } },
        { stdout: sink().stream, stderr: sink().stream, cwd: dir, env: { ...env(), HOME: home } },
      );
      await expect(running).rejects.toThrow(UsageError);
      await expect(running).rejects.toThrow(`refusing config file ${path} (--config): other users may write it`);
      expect(evil.seen).toEqual([]);
    } finally {
      await evil.close();
    }
  });
});

describe("a working-directory config never switches the hosts of the user's profile silently", () => {
  beforeEach(() => userConfig());

  it('refuses a profile that changes authUrl / allowInsecure of the same profile in ~/.config', () => {
    planted(EVIL('http://evil.example.net'));
    const message = usage(() => resolveConfig({ env: env(), cwd: dir, home }));
    expect(message).toContain('its profile "prod" changes authUrl, allowInsecure');
    expect(message).toContain('--config');
    expect(message).toContain('HTORDER_TRUST_LOCAL_CONFIG=1');
  });

  it('refuses one that names another secret file', () => {
    planted(`profiles:\n  prod:\n    clientSecretFile: ${join(dir, 'other')}\n`);
    expect(usage(() => resolveConfig({ env: env(), cwd: dir, home }))).toContain('changes clientSecretFile');
  });

  it('refuses one that points the ledger at another database, or reads its password from another file', () => {
    planted(
      `profiles:\n  prod:\n    ledgerUrl: postgres://htorder@db.evil.example.net/h\n    ledgerPasswordFile: ${join(dir, 'pw')}\n`,
    );
    expect(usage(() => resolveConfig({ env: env(), cwd: dir, home }))).toContain(
      'changes ledgerUrl, ledgerPasswordFile',
    );
  });

  it('accepts it when trusted explicitly: --config naming it, or HTORDER_TRUST_LOCAL_CONFIG=1', () => {
    const path = planted(EVIL('https://auth.other.example.com'));
    const secret = { HTORDER_CLIENT_SECRET: 'theirs' };
    expect(resolveConfig({ env: env({ ...secret, HTORDER_TRUST_LOCAL_CONFIG: '1' }), cwd: dir, home }).authUrl).toBe(
      'https://auth.other.example.com',
    );
    expect(resolveConfig({ env: env(secret), flags: { config: path }, cwd: dir, home }).authUrl).toBe(
      'https://auth.other.example.com',
    );
  });

  it('accepts changes of other keys, and a profile only the working directory defines', () => {
    planted(
      'profiles:\n  prod:\n    baseUrl: https://api.us.example.com\n    authUrl: https://auth.us.example.com\n' +
        `    realm: htorder-us\n    clientId: me\n    clientSecretFile: ${secretFile}\n    concurrency: 2\n` +
        `  project:\n    baseUrl: https://api.nz.example.com\n    authUrl: https://auth.nz.example.com\n` +
        `    realm: r\n    clientId: c\n    clientSecretFile: ${secretFile}\n`,
    );
    expect(resolveConfig({ env: env(), cwd: dir, home }).concurrency).toBe(2);
    expect(resolveConfig({ env: { HTORDER_PROFILE: 'project' }, cwd: dir, home }).baseUrl).toBe(
      'https://api.nz.example.com',
    );
  });

  it('end to end: run refuses (a usage error: exit 2) and the planted host never sees the secret', async () => {
    const evil = await startLoopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"access_token":"x","expires_in":300}');
    });
    try {
      planted(EVIL(evil.url));
      writeFileSync(join(dir, 'orders.yaml'), 'version: 1\njobs: []\n');
      const running = runPipelineCommand(
        { command: 'run', files: [join(dir, 'orders.yaml')], flags: {} },
        {
          stdout: sink().stream,
          stderr: sink().stream,
          cwd: dir,
          env: { ...env(), HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_STATE_HOME: join(home, 'st') },
        },
      );
      await expect(running).rejects.toThrow(UsageError);
      await expect(running).rejects.toThrow(/refusing .*changes authUrl, allowInsecure/);
      expect(evil.seen).toEqual([]);
    } finally {
      await evil.close();
    }
  });
});

describe('secrets in config errors and file modes', () => {
  it('a malformed config file names the line and column, never the clientSecret line', () => {
    planted(`profiles:\n  p:\n    clientSecret: ${SECRET}: oops\n`);
    const message = usage(() => resolveSettings({ env: { HTORDER_PROFILE: 'p' }, cwd: dir, home }));
    expect(message).toContain('not valid YAML');
    expect(message).toContain('line 3');
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain('clientSecret');
  });

  it('an unterminated quote in the secret does not leak it either', () => {
    planted(`profiles:\n  p:\n    clientSecret: "${SECRET}\n`);
    const message = usage(() => resolveSettings({ env: { HTORDER_PROFILE: 'p' }, cwd: dir, home }));
    expect(message).not.toContain(SECRET);
  });

  it('warns when the secret file, or a config file holding a secret, is readable by others', () => {
    chmodSync(secretFile, 0o644);
    const full = resolveSettings({ env: { ...fullEnv(), HTORDER_CLIENT_SECRET_FILE: secretFile }, cwd: dir, home });
    apiConfigFrom(full);
    expect(full.warnings.join('\n')).toContain(`secret file ${secretFile}`);
    expect(full.warnings.join('\n')).not.toContain(SECRET);

    chmodSync(secretFile, 0o600);
    const quiet = resolveSettings({ env: { ...fullEnv(), HTORDER_CLIENT_SECRET_FILE: secretFile }, cwd: dir, home });
    apiConfigFrom(quiet);
    expect(quiet.warnings).toEqual([]);

    planted(`profiles:\n  p:\n    clientSecret: ${SECRET}\n`, 0o644);
    const inline = resolveSettings({ env: { HTORDER_PROFILE: 'p' }, cwd: dir, home });
    expect(inline.warnings.join('\n')).toContain('holds a clientSecret and other users can read it');
  });
});

function fullEnv(): Record<string, string> {
  return {
    HTORDER_BASE_URL: 'https://api.us.example.com',
    HTORDER_AUTH_URL: 'https://auth.us.example.com',
    HTORDER_REALM: 'r',
    HTORDER_CLIENT_ID: 'c',
  };
}
