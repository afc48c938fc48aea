import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildProgram, runCli } from '../../src/cli/program.js';
import { sandboxEnv } from '../../src/core/config/sandbox-config.js';
import { SETTINGS, SETTING_NAMES, setting, type SettingName } from '../../src/core/config/settings.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';
import { startTestS3, type TestS3 } from '../support/s3.js';

/**
 * Every setting of the table (src/core/config/settings.ts) × every source it can come from × every
 * command that takes it, derived from the table and the program itself, so a setting added later
 * is walked too:
 *   - a bad value stops the command with exit 2 before any request reaches the sandbox, and the
 *     message names the setting where it was set (its flag, its variable, the profile, the config
 *     file's top level, its default profile, a watch route's profile);
 *   - valid values are honoured: set all at once in one source, the command is not stopped, and
 *     its `--log-level debug` report of the settings in force names each with that source.
 * Sources: the flag (where the command offers it), the environment, a selected profile, the config
 * file's top level and its `default` profile (the one-account way), and for `watch` a route's profile.
 */

const io = captureStdio();

type Source = 'flag' | 'env' | 'profile' | 'top-level' | 'default-profile' | 'route';
const FILE_SOURCES: readonly Source[] = ['profile', 'top-level', 'default-profile', 'route'];

/** The commands that check every setting at their start, and their arguments (paths made in beforeAll). */
const COMMANDS: Record<string, () => string[]> = {
  check: () => ['check', w.input],
  plan: () => ['plan', w.input],
  run: () => ['run', w.input],
  apply: () => ['apply', w.plan],
  approve: () => ['approve', w.input],
  track: () => ['track'],
  // A drop folder of its own each time: a folder is marked with the ledger of its first watcher
  // (the runs' ledgers differ by source), and marks are not what this walk is about.
  watch: () => ['watch', mkdtempSync(join(w.drop, 'run-'))],
  api: () => ['api', 'GET', '/account'],
};
/** Not a command under test: submits the job `track` follows. */
const SETUP: Record<string, () => string[]> = { 'run-tracked': () => ['run', w.tracked] };
const COMMAND_NAMES = Object.keys(COMMANDS);

/** The long flags each command offers, read from the program as `--help` shows them. */
const OFFERED = new Map(buildProgram().commands.map((c) => [c.name(), new Set(c.options.map((o) => o.long))]));

/**
 * Text settings whose values are checked beyond "not empty", with a value each refuses; every
 * other text setting is free text (no bad value but a blank one, which is "unset"). A text
 * setting added to the table must be put in one list or the other (the first test says so).
 */
const CHECKED_TEXT: Partial<Record<SettingName, string>> = {
  profile: 'nowhere',
  processingDir: 'a/b',
  doneDir: '..',
  failedDir: 'x\\y',
  heldDir: '.',
  artworkStore: 'bucket-without-scheme',
  bucketLedger: 's3:/no-bucket',
  ledgerUrl: 'mysql://htorder@127.0.0.1/ledger',
  notifyUrl: 'not a url',
  notifyOn: 'failed,fialed',
  notifyDigestAt: '25:00',
};
const FREE_TEXT: readonly SettingName[] = [
  'realm',
  'clientId',
  'clientSecret',
  'appName',
  's3Region',
  'uiToken',
  'defaultDeliveryMethod',
];

/** A value `name` refuses, from its type (or CHECKED_TEXT); undefined when none exists. */
function badValue(name: SettingName): string | undefined {
  const t = setting(name).type;
  switch (t.kind) {
    case 'integer':
      return 'abc';
    case 'milliseconds':
      return '1m';
    case 'amount':
      return '1,000';
    case 'boolean':
      return 'ture';
    case 'enum':
      return 'nope';
    case 'port':
      return '70000';
    case 'host':
      return 'http://h:1';
    case 'url':
      return 'not a url';
    case 'duration':
      return '2 days';
    case 'path':
      return name === 'config' ? join(tmpdir(), 'no-such-config.yaml') : undefined;
    case 'string':
      return CHECKED_TEXT[name];
  }
}

/** A value `name` accepts, that a run against the test's sandbox can live with. */
function validValue(name: SettingName): string {
  const special: Partial<Record<SettingName, () => string>> = {
    config: () => w.plainConfig,
    profile: () => 'plain',
    // Where the job `track` follows is recorded (beforeAll).
    stateDir: () => w.state,
    clientSecretFile: () => w.secretFile,
    notifyUrl: () => `http://127.0.0.1:${w.hookPort}/hook`,
    notifyDigestAt: () => '23:59',
    artworkStore: () => `s3://${w.s3.bucket}/art/`,
    bucketLedger: () => `s3://${w.s3.bucket}/ledger/`,
    // A database nobody listens for, given up on at once: exit 3 where the ledger is opened, not 2.
    ledgerUrl: () => 'postgres://htorder@127.0.0.1:1/ledger',
    ledgerWaitMs: () => '0',
    ledgerPasswordFile: () => w.secretFile,
    s3Endpoint: () => w.s3.endpoint,
    s3Region: () => 'us-east-1',
    clockOffset: () => '+1d',
    logLevel: () => 'debug',
    ...Object.fromEntries(Object.entries(w.account).map(([k, v]) => [k, () => v])),
  };
  const s = setting(name);
  const found = special[name];
  if (found) return found();
  if (s.default !== undefined) return s.type.kind === 'boolean' ? String(!s.default) : String(s.default);
  switch (s.type.kind) {
    case 'integer':
    case 'milliseconds':
      return String(Math.max(s.type.min, 1));
    case 'amount':
      return '1000';
    case 'port':
      return '0';
    case 'host':
      return '127.0.0.1';
    case 'url':
      return 'https://example.com/base';
    case 'boolean':
      return 'true';
    default:
      return 'text';
  }
}

/** The sources `name` can come from for `command`. */
function sourcesOf(name: SettingName, command: string): Source[] {
  const s = setting(name);
  const sources: Source[] = ['env'];
  if (s.flag !== undefined && OFFERED.get(command)?.has(s.flag)) sources.unshift('flag');
  if (s.profile !== false) {
    sources.push('profile', 'top-level', 'default-profile');
    if (command === 'watch') sources.push('route');
  }
  return sources;
}

/** How the message of a bad value names its place. */
function named(name: SettingName, source: Source): string {
  const file = w.config;
  if (name === 'profile' || name === 'config')
    return source === 'flag' ? `(${setting(name).flag})` : `(${setting(name).env})`;
  switch (source) {
    case 'flag':
      return setting(name).flag ?? '';
    case 'env':
      return setting(name).env;
    case 'profile':
      return `${name} of profile "p" in ${file}`;
    case 'top-level':
      return `${name} in config file ${file}`;
    case 'default-profile':
      return `${name} of profile "default" in ${file}`;
    case 'route':
      return `${name} of profile "routed" in ${file} (chosen by route 1 at ${file}:`;
  }
}

/** One invocation: `values` set in `source`; the account from the environment unless a value replaces it. */
interface Case {
  command: string;
  source: Source;
  values: Partial<Record<SettingName, string>>;
  /** With `--sandbox`, the profile selected by `--profile` (flag) or HTORDER_PROFILE (env); the sandbox is the account. */
  sandbox?: 'flag' | 'env';
}

/** Writes the case's config file and returns argv and environment. */
function prepare(c: Case): { argv: string[]; env: Record<string, string> } {
  const argv = (COMMANDS[c.command] ?? SETUP[c.command])?.() ?? [];
  const file = c.source === 'flag' || c.source === 'env' ? {} : fileFor(c);
  writeFileSync(w.config, stringify({ ...file, profiles: { p: {}, ...((file.profiles as object) ?? {}) } }), {
    mode: 0o600,
  });
  // The account from the environment, but what the case sets in the file (the environment would win there).
  const fileLevel = c.source === 'top-level' || c.source === 'default-profile';
  const env: Record<string, string> = { HTORDER_CONFIG: w.config };
  // Quiet, but for a routed watcher, whose own log says when it watches.
  if (c.source !== 'route') env.HTORDER_LOG_LEVEL = 'silent';
  for (const [k, v] of Object.entries(c.sandbox ? {} : w.account)) {
    if (!(fileLevel && (k in c.values || (k === 'clientSecret' && 'clientSecretFile' in c.values))))
      env[SETTINGS[k as SettingName].env] = v;
  }
  if (fileLevel && 'logLevel' in c.values) delete env.HTORDER_LOG_LEVEL;
  if (c.source === 'env') {
    for (const [k, v] of Object.entries(c.values)) env[SETTINGS[k as SettingName].env] = v as string;
    if ('clientSecretFile' in c.values) delete env.HTORDER_CLIENT_SECRET;
  }
  if (c.source === 'flag') {
    for (const [k, v] of Object.entries(c.values)) {
      const s = setting(k as SettingName);
      argv.push(...(s.type.kind === 'boolean' ? [s.flag as string] : [s.flag as string, v as string]));
    }
  }
  if (c.sandbox) argv.push('--sandbox');
  if (c.source === 'profile') {
    if (c.sandbox !== 'env' && OFFERED.get(c.command)?.has('--profile')) argv.push('--profile', 'p');
    else env.HTORDER_PROFILE = 'p';
  }
  return { argv, env };
}

function fileFor(c: Case): Record<string, unknown> {
  const values = typed(c.values);
  switch (c.source) {
    case 'profile':
      return { profiles: { p: values } };
    case 'top-level':
      return values;
    case 'default-profile':
      return { profiles: { default: values } };
    case 'route':
      return { profiles: { routed: values }, routes: [{ match: '*', profile: 'routed' }] };
    default:
      return {};
  }
}

/** YAML scalars as a user writes them: numbers and booleans unquoted where the setting takes them. */
function typed(values: Case['values']): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values).map(([k, v]) => {
      const kind = setting(k as SettingName).type.kind;
      if (kind === 'boolean' && (v === 'true' || v === 'false')) return [k, v === 'true'];
      if (['integer', 'milliseconds', 'port'].includes(kind) && /^\d+$/.test(v as string)) return [k, Number(v)];
      return [k, v];
    }),
  );
}

/** Runs the case in-process, as the command line would; watch is stopped once it watches (or after 5 s). */
async function invoke(c: Case): Promise<{ code: number; err: string }> {
  const { argv, env } = prepare(c);
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith('HTORDER_')) delete process.env[k];
  Object.assign(process.env, env);
  io.err = '';
  let stop: NodeJS.Timeout | undefined;
  if (c.command === 'watch') {
    const started = Date.now();
    stop = setInterval(() => {
      if (!io.err.includes('watching for manifests') && Date.now() - started < 5000) return;
      clearInterval(stop);
      process.emit('SIGTERM');
    }, 20);
  }
  try {
    const code = await runCli(argv);
    return { code, err: io.err };
  } finally {
    clearInterval(stop);
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

interface World {
  dir: string;
  input: string;
  /** An input with a submitted job, for track to follow, and the state dir whose ledger records it. */
  tracked: string;
  state: string;
  /** An S3 server on loopback, for the settings that name a bucket (bucketLedger: approve reads it). */
  s3: TestS3;
  plan: string;
  drop: string;
  config: string;
  plainConfig: string;
  secretFile: string;
  hookPort: number;
  account: Record<string, string>;
}
let w: World;
/** The sandbox no bad value may reach, and the one the valid runs use. */
let quiet: Sandbox;
let busy: Sandbox;
let hooks: Server;

/** The account settings of one of the test's sandboxes. */
function accountOf(sandbox: Sandbox): Record<string, string> {
  const env = sandboxEnv(sandbox, 'us-demo');
  return {
    baseUrl: env.HTORDER_BASE_URL as string,
    authUrl: env.HTORDER_AUTH_URL as string,
    realm: env.HTORDER_REALM as string,
    clientId: env.HTORDER_CLIENT_ID as string,
    clientSecret: env.HTORDER_CLIENT_SECRET as string,
    statusUrl: (sandbox.regions.us as { statusUrl: string }).statusUrl,
  };
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'htorder-sources-'));
  quiet = await startSandbox({ port: 0 });
  busy = await startSandbox({ port: 0 });
  hooks = createServer((_req, res) => res.end('ok')).listen(0, '127.0.0.1');
  await once(hooks, 'listening');
  const input = join(dir, 'orders.yaml');
  writeFileSync(input, readFileSync(join(ROOT, 'samples/reorder/asset-reorder.yaml')));
  const sha256 = createHash('sha256').update(readFileSync(input)).digest('hex');
  const plan = join(dir, 'plan.json');
  const createdAt = new Date().toISOString();
  writeFileSync(
    plan,
    JSON.stringify({ planVersion: 1, account: 'x', createdAt, inputs: [{ file: input, sha256, jobs: [] }] }),
    {
      mode: 0o600,
    },
  );
  mkdirSync(join(dir, 'drop'));
  const plainConfig = join(dir, 'plain.yaml');
  writeFileSync(plainConfig, 'profiles:\n  plain: {}\n', { mode: 0o600 });
  const account = accountOf(quiet);
  const secretFile = join(dir, 'secret');
  // Both sandboxes have the seed's secrets.
  writeFileSync(secretFile, account.clientSecret as string, { mode: 0o600 });
  w = {
    dir,
    input,
    tracked: join(dir, 'tracked.yaml'),
    state: mkdtempSync(join(dir, 'state-')),
    s3: await startTestS3({ conditional: true }),
    plan,
    drop: join(dir, 'drop'),
    config: join(dir, 'config.yaml'),
    plainConfig,
    secretFile,
    hookPort: (hooks.address() as { port: number }).port,
    account,
  };
});

/** The job `track` follows: submitted to `busy`, so `quiet` sees no request. */
beforeAll(async () => {
  // The bucket's credentials, as the AWS SDK reads them.
  for (const [k, v] of Object.entries(w.s3.env)) if (!k.startsWith('HTORDER_')) process.env[k] = v;
  const own = w.account;
  w.account = accountOf(busy);
  try {
    writeFileSync(w.tracked, readFileSync(w.input));
    // One job of the test's account and one of --sandbox's, both in the ledger of w.state.
    for (const sandbox of [undefined, 'flag'] as const) {
      const c: Case = {
        command: 'run-tracked',
        source: 'env',
        values: { stateDir: w.state },
        ...(sandbox ? { sandbox } : {}),
      };
      const { code, err } = await invoke(c);
      expect(code, err).toBe(0);
    }
  } finally {
    w.account = own;
  }
});

afterAll(async () => {
  await w?.s3.close();
  await quiet?.close();
  await busy?.close();
  hooks?.close();
});

describe('the settings table, walked', () => {
  it('every text setting is either checked (with a value it refuses) or free text', () => {
    const text = SETTING_NAMES.filter((n) => setting(n).type.kind === 'string');
    expect(text.filter((n) => !(n in CHECKED_TEXT) && !FREE_TEXT.includes(n))).toEqual([]);
  });

  describe.each(COMMAND_NAMES)('%s', (command) => {
    const rows = SETTING_NAMES.flatMap((name) => {
      const bad = badValue(name);
      return bad === undefined ? [] : [[name, bad] as const];
    });

    it.each(rows)('a bad %s stops it with exit 2, naming where it was set, before any request', async (name, bad) => {
      for (const source of sourcesOf(name, command)) {
        if (source === 'flag' && setting(name).type.kind === 'boolean') continue; // a switch has no value
        if ((name === 'profile' || name === 'config') && FILE_SOURCES.includes(source)) continue;
        const { code, err } = await invoke({ command, source, values: { [name]: bad } });
        expect(err, `${command}, ${name} from ${source}`).toContain(named(name, source));
        expect(code, `${command}, ${name} from ${source}: ${err}`).toBe(2);
        expect(await quiet.admin.calls(), `${command}, ${name} from ${source}`).toEqual({});
      }
    });
  });

  describe('valid values', () => {
    beforeAll(() => {
      w.account = accountOf(busy);
    });

    const rows = COMMAND_NAMES.flatMap((command) => {
      const sources = new Set(SETTING_NAMES.flatMap((n) => sourcesOf(n, command)));
      return [...sources].map((source) => [command, source] as const);
    });

    it.each(rows)('%s: valid values from the %s are taken, and reported with it', async (command, source) => {
      // The secret and its file are one setting (both in one place is a contradiction): one run each.
      for (const one of ['clientSecretFile', 'clientSecret'] as const) {
        const names = SETTING_NAMES.filter(
          (n) =>
            sourcesOf(n, command).includes(source) &&
            n !== (one === 'clientSecret' ? 'clientSecretFile' : 'clientSecret') &&
            (one === 'clientSecretFile' || ['clientSecret', 'logLevel', 'stateDir'].includes(n)),
        );
        if (!names.includes(one) && one === 'clientSecret') continue;
        const values = Object.fromEntries(names.map((n) => [n, validValue(n)]));
        const { code, err } = await invoke({ command, source, values });
        expect(code, `${command} with every setting from the ${source}: ${err.slice(-2000)}`).not.toBe(2);
        if (command === 'check') continue; // no log: nothing to report
        const reports = err
          .split('\n')
          .filter((l) => l.includes('"settings in force"'))
          .map((l) => (JSON.parse(l) as { settings: string[] }).settings);
        const report = source === 'route' ? reports.find((r) => r.some((e) => e.includes('(chosen by'))) : reports[0];
        expect(report, `${command}: no report of the settings in force from the ${source}`).toBeDefined();
        for (const name of names) {
          const entry = report?.find((e) => e.startsWith(`${name}=`));
          expect(entry, `${command}: ${name} from the ${source}`).toBeDefined();
          expect(
            entry?.endsWith(`(${sourceName(name, source)})`) || entry?.includes(`(${sourceName(name, source)}`),
            `${command}: ${entry}`,
          ).toBe(true);
        }
      }
    });
  });

  describe('with --sandbox, a profile gives everything but the account', () => {
    /** What the sandbox supplies itself. */
    const ACCOUNT: readonly SettingName[] = [
      'baseUrl',
      'authUrl',
      'realm',
      'clientId',
      'clientSecret',
      'clientSecretFile',
      'statusUrl',
    ];
    const rows = COMMAND_NAMES.filter((c) => OFFERED.get(c)?.has('--sandbox')).flatMap((command) =>
      (['flag', 'env'] as const).map((selector) => [command, selector] as const),
    );

    it.each(rows)('%s --sandbox, the profile selected by its %s', async (command, selector) => {
      const names = SETTING_NAMES.filter((n) => sourcesOf(n, command).includes('profile') && !ACCOUNT.includes(n));
      const values = Object.fromEntries(names.map((n) => [n, validValue(n)]));
      const { code, err } = await invoke({ command, source: 'profile', values, sandbox: selector });
      expect(code, `${command} --sandbox: ${err.slice(-2000)}`).not.toBe(2);
      const line = err.split('\n').find((l) => l.includes('"settings in force"'));
      const report = line === undefined ? [] : (JSON.parse(line) as { settings: string[] }).settings;
      for (const name of names) {
        const entry = report.find((e) => e.startsWith(`${name}=`));
        expect(entry?.endsWith(`(${named(name, 'profile')})`), `${command} --sandbox: ${name}: ${entry}`).toBe(true);
      }
    });
  });
});

/** How the report of the settings in force names a valid value's place. */
function sourceName(name: SettingName, source: Source): string {
  if (source === 'flag') return setting(name).flag ?? '';
  if (source === 'env') return setting(name).env;
  return named(name, source);
}
