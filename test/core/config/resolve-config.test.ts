import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/core/config/resolve-config.js';
import { sandboxConfig } from '../../../src/core/config/sandbox-config.js';
import { usageMessage } from '../../support/usage-error.js';

const BASE_ENV = {
  HTORDER_BASE_URL: 'https://api.us.example.com/',
  HTORDER_AUTH_URL: 'https://auth.us.example.com',
  HTORDER_REALM: 'htorder-us',
  HTORDER_CLIENT_ID: 'env-client',
  HTORDER_CLIENT_SECRET: 'env-secret',
};

let dir: string;
let home: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'htorder-config-'));
  home = mkdtempSync(join(tmpdir(), 'htorder-home-'));
});

const PROFILES = `
profiles:
  nz:
    baseUrl: https://api.nz.example.com
    authUrl: https://auth.nz.example.com
    realm: htorder-nz
    clientId: nz-client
    clientSecretFile: secrets/nz.txt
    concurrency: 3
  broken:
    baseUrl: https://api.uk.example.com
    clientSecret: inline
    clientSecretFile: also.txt
`;

describe('resolveConfig from the environment', () => {
  it('puts the default state dir under $XDG_STATE_HOME when it is absolute, never in the working directory', () => {
    expect(resolveConfig({ env: { ...BASE_ENV, XDG_STATE_HOME: '/srv/state' }, cwd: dir, home }).stateDir).toBe(
      '/srv/state/htorder',
    );
    expect(resolveConfig({ env: { ...BASE_ENV, XDG_STATE_HOME: 'rel' }, cwd: dir, home }).stateDir).toBe(
      join(home, '.local', 'state', 'htorder'),
    );
  });

  it('takes every value from HTORDER_* and fills the documented defaults', () => {
    const c = resolveConfig({ env: BASE_ENV, cwd: dir, home });
    expect(c).toMatchObject({
      baseUrl: 'https://api.us.example.com',
      authUrl: 'https://auth.us.example.com',
      realm: 'htorder-us',
      clientId: 'env-client',
      clientSecret: 'env-secret',
      statusUrl: null,
      // Per user, not per working directory (issue 13): ~/.local/state/htorder.
      stateDir: join(home, '.local', 'state', 'htorder'),
      concurrency: 8,
      appName: 'API',
      allowInsecure: false,
      profile: null,
    });
  });

  it.each([['HTORDER_BASE_URL'], ['HTORDER_AUTH_URL'], ['HTORDER_REALM'], ['HTORDER_CLIENT_ID']])(
    'names %s when it is missing',
    (name) => {
      const env: Record<string, string | undefined> = { ...BASE_ENV, [name]: undefined };
      expect(usageMessage(() => resolveConfig({ env, cwd: dir, home }))).toContain(name);
    },
  );

  it('treats an empty variable as missing', () => {
    expect(usageMessage(() => resolveConfig({ env: { ...BASE_ENV, HTORDER_REALM: '  ' }, cwd: dir, home }))).toContain(
      'HTORDER_REALM',
    );
  });

  it('names both secret variables when neither is set', () => {
    const msg = usageMessage(() =>
      resolveConfig({ env: { ...BASE_ENV, HTORDER_CLIENT_SECRET: undefined }, cwd: dir, home }),
    );
    expect(msg).toContain('HTORDER_CLIENT_SECRET');
    expect(msg).toContain('HTORDER_CLIENT_SECRET_FILE');
  });

  it('refuses a secret and a secret file together', () => {
    writeFileSync(join(dir, 's.txt'), 'x');
    const msg = usageMessage(() =>
      resolveConfig({ env: { ...BASE_ENV, HTORDER_CLIENT_SECRET_FILE: 's.txt' }, cwd: dir, home }),
    );
    expect(msg).toMatch(/contradictory.*HTORDER_CLIENT_SECRET.*HTORDER_CLIENT_SECRET_FILE/);
  });

  it('reads the secret file relative to cwd, trimming the trailing newline', () => {
    writeFileSync(join(dir, 's.txt'), 'from-file\n');
    const c = resolveConfig({
      env: { ...BASE_ENV, HTORDER_CLIENT_SECRET: undefined, HTORDER_CLIENT_SECRET_FILE: 's.txt' },
      cwd: dir,
      home,
    });
    expect(c.clientSecret).toBe('from-file');
  });

  it('reports an unreadable secret file without printing any secret', () => {
    const msg = usageMessage(() =>
      resolveConfig({
        env: { ...BASE_ENV, HTORDER_CLIENT_SECRET: undefined, HTORDER_CLIENT_SECRET_FILE: 'nope.txt' },
        cwd: dir,
        home,
      }),
    );
    expect(msg).toContain('HTORDER_CLIENT_SECRET_FILE');
    expect(msg).toContain('ENOENT');
  });

  it.each(['eight', '0', '-1', '2.5'])('refuses concurrency %s, naming the variable', (value) => {
    const msg = usageMessage(() => resolveConfig({ env: { ...BASE_ENV, HTORDER_CONCURRENCY: value }, cwd: dir, home }));
    expect(msg).toContain('HTORDER_CONCURRENCY');
  });

  it('accepts concurrency, state dir, app name and timeouts', () => {
    const c = resolveConfig({
      env: {
        ...BASE_ENV,
        HTORDER_CONCURRENCY: '3',
        HTORDER_STATE_DIR: 'state',
        HTORDER_APP_NAME: 'ERP',
        HTORDER_CONNECT_TIMEOUT_MS: '1500',
        HTORDER_REQUEST_TIMEOUT_MS: '9000',
      },
      cwd: dir,
      home,
    });
    expect(c).toMatchObject({ concurrency: 3, stateDir: join(dir, 'state'), appName: 'ERP' });
    expect(c.timeouts).toEqual({ connectMs: 1500, headersMs: 9000, bodyMs: 9000, deadlineMs: 300000 });
  });

  it('refuses a base URL that is not a URL', () => {
    expect(
      usageMessage(() => resolveConfig({ env: { ...BASE_ENV, HTORDER_BASE_URL: 'api.example.com' }, cwd: dir, home })),
    ).toContain('HTORDER_BASE_URL');
  });
});

describe('transport security', () => {
  it('refuses plain http to a non-loopback host, naming the variable and the override', () => {
    const msg = usageMessage(() =>
      resolveConfig({ env: { ...BASE_ENV, HTORDER_BASE_URL: 'http://api.us.example.com' }, cwd: dir, home }),
    );
    expect(msg).toContain('HTORDER_BASE_URL');
    expect(msg).toContain('HTORDER_ALLOW_INSECURE');
  });

  it('allows it with HTORDER_ALLOW_INSECURE=1 or --allow-insecure', () => {
    const env = { ...BASE_ENV, HTORDER_AUTH_URL: 'http://auth.example.com' };
    expect(resolveConfig({ env: { ...env, HTORDER_ALLOW_INSECURE: '1' }, cwd: dir, home }).allowInsecure).toBe(true);
    expect(resolveConfig({ env, flags: { allowInsecure: true }, cwd: dir, home }).authUrl).toBe(
      'http://auth.example.com',
    );
  });

  it.each(['http://127.0.0.1:8080/us/api', 'http://localhost:1/x', 'http://[::1]:9/api'])(
    'allows plain http on loopback %s',
    (url) => {
      expect(resolveConfig({ env: { ...BASE_ENV, HTORDER_BASE_URL: url }, cwd: dir, home }).baseUrl).toBe(url);
    },
  );
});

describe('profiles and precedence', () => {
  function writeProfiles(path: string): void {
    mkdirSync(join(path, '..', 'secrets'), { recursive: true });
    writeFileSync(path, PROFILES);
    writeFileSync(join(path, '..', 'secrets', 'nz.txt'), 'nz-secret\n');
  }

  it('flags beat the profile, the profile beats the environment', () => {
    writeProfiles(join(dir, 'htorder.config.yaml'));
    const c = resolveConfig({
      env: { ...BASE_ENV, HTORDER_PROFILE: 'nz', HTORDER_APP_NAME: 'FROMENV' },
      flags: { realm: 'flag-realm' },
      cwd: dir,
      home,
    });
    expect(c.realm).toBe('flag-realm'); // flag
    expect(c.baseUrl).toBe('https://api.nz.example.com'); // profile over env
    expect(c.clientId).toBe('nz-client');
    expect(c.clientSecret).toBe('nz-secret'); // profile's secret file, relative to the config file
    expect(c.concurrency).toBe(3);
    expect(c.appName).toBe('FROMENV'); // the profile does not set it: env fills the gap
    expect(c.profile).toBe('nz');
  });

  it('--profile wins over HTORDER_PROFILE, and --config over the default locations', () => {
    const elsewhere = join(dir, 'conf', 'my.yaml');
    mkdirSync(join(dir, 'conf'));
    writeProfiles(elsewhere);
    writeFileSync(join(dir, 'htorder.config.yaml'), 'profiles: {}\n');
    const c = resolveConfig({
      env: { ...BASE_ENV, HTORDER_PROFILE: 'other' },
      flags: { profile: 'nz', config: elsewhere },
      cwd: dir,
      home,
    });
    expect(c.clientId).toBe('nz-client');
  });

  it('finds ~/.config/htorder/config.yaml (and honours XDG_CONFIG_HOME)', () => {
    writeProfiles(join(home, '.config', 'htorder', 'config.yaml'));
    expect(resolveConfig({ env: { HTORDER_PROFILE: 'nz' }, cwd: dir, home }).clientId).toBe('nz-client');
    const xdg = join(dir, 'xdg');
    mkdirSync(join(xdg, 'htorder'), { recursive: true });
    writeFileSync(join(xdg, 'htorder', 'config.yaml'), 'profiles: { other: {} }\n');
    expect(
      usageMessage(() => resolveConfig({ env: { HTORDER_PROFILE: 'nz', XDG_CONFIG_HOME: xdg }, cwd: dir, home })),
    ).toContain('known profiles: other');
  });

  it('a profile that does not exist lists the known ones', () => {
    writeProfiles(join(dir, 'htorder.config.yaml'));
    const msg = usageMessage(() => resolveConfig({ env: BASE_ENV, flags: { profile: 'au' }, cwd: dir, home }));
    expect(msg).toContain('profile "au" (--profile) not found');
    expect(msg).toContain('nz, broken');
  });

  it('a profile with no config file anywhere says where it looked', () => {
    const msg = usageMessage(() => resolveConfig({ env: { ...BASE_ENV, HTORDER_PROFILE: 'nz' }, cwd: dir, home }));
    expect(msg).toContain('HTORDER_CONFIG');
  });

  it('an explicit config file that does not exist is an error, not silently ignored', () => {
    const msg = usageMessage(() =>
      resolveConfig({ env: { ...BASE_ENV, HTORDER_CONFIG: 'missing.yaml' }, cwd: dir, home }),
    );
    expect(msg).toContain('missing.yaml');
  });

  it('a profile with both clientSecret and clientSecretFile is contradictory', () => {
    writeProfiles(join(dir, 'htorder.config.yaml'));
    const msg = usageMessage(() => resolveConfig({ env: BASE_ENV, flags: { profile: 'broken' }, cwd: dir, home }));
    expect(msg).toMatch(/contradictory.*clientSecret.*clientSecretFile/);
  });

  it('a flag secret file outranks a profile secret', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), 'profiles: { p: { clientSecret: from-profile } }\n');
    writeFileSync(join(dir, 'flag.txt'), 'from-flag');
    const c = resolveConfig({ env: BASE_ENV, flags: { profile: 'p', clientSecretFile: 'flag.txt' }, cwd: dir, home });
    expect(c.clientSecret).toBe('from-flag');
  });

  it('unknown or mistyped profile keys are errors naming the key', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), 'profiles: { p: { baseURL: https://x.example.com } }\n');
    expect(usageMessage(() => resolveConfig({ env: BASE_ENV, flags: { profile: 'p' }, cwd: dir, home }))).toContain(
      '"baseURL"',
    );
    writeFileSync(join(dir, 'htorder.config.yaml'), 'profiles: { p: { concurrency: [1] } }\n');
    expect(usageMessage(() => resolveConfig({ env: BASE_ENV, flags: { profile: 'p' }, cwd: dir, home }))).toContain(
      '"concurrency"',
    );
  });

  it('an alias without its anchor, or an alias bomb, is an error at the alias, not a crash', () => {
    const file = join(dir, 'htorder.config.yaml');
    const resolve = () => resolveConfig({ env: BASE_ENV, flags: {}, cwd: dir, home });
    writeFileSync(file, 'profiles:\n  p:\n    appName: *shop\n');
    expect(usageMessage(resolve)).toBe(`config file ${file}:3:14: alias *shop has no anchor &shop before it`);
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      levels.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    writeFileSync(file, `${levels.join('\n')}\n`);
    expect(usageMessage(resolve)).toBe(
      `config file ${file}:2:10: aliases expand too far (this looks like an alias bomb); write the values out`,
    );
  });

  it('a misspelt key or a value of the wrong type is located in the file, with a suggestion and what it takes', () => {
    const file = join(dir, 'htorder.config.yaml');
    const resolve = () => resolveConfig({ env: BASE_ENV, flags: { profile: 'p' }, cwd: dir, home });
    writeFileSync(file, 'profiles:\n  p:\n    maxJobCost: 100\n    concurency: 4\n');
    expect(usageMessage(resolve)).toMatch(
      new RegExp(
        `^config file ${file}:4:5: profile "p": unknown key "concurency" \\(did you mean "concurrency"\\?\\) \\(known: `,
      ),
    );
    writeFileSync(file, 'profiles:\n  p:\n    maxJobCost: [1, 2]\n');
    expect(usageMessage(resolve)).toBe(
      `config file ${file}:3:5: profile "p": "maxJobCost" has the wrong type (a list); it takes a number`,
    );
    writeFileSync(file, 'allowInsecure: {a: 1}\nprofiles: {p: {}}\n');
    expect(usageMessage(resolve)).toBe(
      `config file ${file}:1:1: top-level setting "allowInsecure" has the wrong type (a mapping); it takes true or false`,
    );
  });

  it('a non-numeric concurrency in a profile names the profile key', () => {
    writeFileSync(join(dir, 'htorder.config.yaml'), 'profiles: { p: { concurrency: many } }\n');
    expect(usageMessage(() => resolveConfig({ env: BASE_ENV, flags: { profile: 'p' }, cwd: dir, home }))).toMatch(
      /concurrency of profile "p"/,
    );
  });

  it('without a selected profile the file changes nothing', () => {
    writeProfiles(join(dir, 'htorder.config.yaml'));
    expect(resolveConfig({ env: BASE_ENV, cwd: dir, home }).clientId).toBe('env-client');
  });
});

describe('sandboxConfig', () => {
  const directory = {
    regions: {
      us: {
        baseUrl: 'http://127.0.0.1:9/us/api',
        authUrl: 'http://127.0.0.1:9/us/auth',
        realm: 'htorder-us',
        statusUrl: 'http://127.0.0.1:9/us/status',
      },
      nz: {
        baseUrl: 'http://127.0.0.1:9/nz/api',
        authUrl: 'http://127.0.0.1:9/nz/auth',
        realm: 'htorder-nz',
        statusUrl: 'http://127.0.0.1:9/nz/status',
      },
    },
    accounts: [
      { name: 'us-demo', region: 'us', clientId: 'us-demo', clientSecret: 's1' },
      { name: 'nz-demo', region: 'nz', clientId: 'nz-demo', clientSecret: 's2' },
    ],
  };
  it('maps an account to its region', () => {
    expect(sandboxConfig(directory)).toMatchObject({
      baseUrl: directory.regions.us.baseUrl,
      clientId: 'us-demo',
      clientSecret: 's1',
    });
    expect(sandboxConfig(directory, 'nz-demo', { concurrency: 2 })).toMatchObject({
      realm: 'htorder-nz',
      concurrency: 2,
    });
  });
  it('names the known accounts for an unknown one', () => {
    expect(usageMessage(() => sandboxConfig(directory, 'au-demo'))).toContain('us-demo, nz-demo');
  });
});
