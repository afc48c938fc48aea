import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { resolveConfig } from '../../src/core/config/resolve-config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';
import { usageMessage } from '../support/usage-error.js';

/**
 * The one-account way (docs/configuration.md#the-one-account-way): a config file's top-level
 * settings and its `default` profile apply with no profile selected; an environment variable
 * beats them, a selected profile beats the environment. And under `--sandbox`, a profile's
 * limits hold whichever way it is selected, while the sandbox stays the account.
 */

const io = captureStdio();
let sandbox: Sandbox;
let dir: string;
let order: string;
const saved = { ...process.env };

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'htorder-one-account-'));
  // A reorder estimated at 150.00 USD.
  order = join(dir, 'reorder.yaml');
  writeFileSync(order, readFileSync(join(ROOT, 'samples/reorder/asset-reorder.yaml')));
  for (const k of Object.keys(process.env)) if (k.startsWith('HTORDER_')) delete process.env[k];
  return () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  };
});

/** The account of the test's sandbox, as YAML lines at `indent`. */
function account(indent: string): string {
  const a = sandbox.accounts.find((x) => x.name === 'us-demo');
  const r = sandbox.regions.us;
  if (!a || !r) throw new Error('no us-demo');
  return [
    `baseUrl: ${r.baseUrl}`,
    `authUrl: ${r.authUrl}`,
    `realm: ${r.realm}`,
    `clientId: ${a.clientId}`,
    `clientSecret: ${a.clientSecret}`,
  ]
    .map((l) => `${indent}${l}\n`)
    .join('');
}

function config(text: string): void {
  const file = join(dir, 'config.yaml');
  writeFileSync(file, text, { mode: 0o600 });
  process.env.HTORDER_CONFIG = file;
}

/** `plan ARGS reorder.yaml`: its exit code and the job's status. */
async function plan(...args: string[]): Promise<{ code: number; status: string }> {
  const code = await runCli(['plan', ...args, order]);
  const report = JSON.parse(readFileSync(`${order}.result.json`, 'utf8')) as { jobs: { status: string }[] };
  return { code, status: report.jobs[0]?.status ?? '' };
}

describe('no profile selected', () => {
  it('the top-level settings of the config file are the account and its limits', async () => {
    config(`${account('')}maxJobCost: 100\n`);
    expect(await plan(), io.err).toEqual({ code: 4, status: 'awaiting-approval' });
  });

  it('a profile named default is used', async () => {
    config(`profiles:\n  default:\n${account('    ')}    maxJobCost: 100\n  other: {}\n`);
    expect(await plan(), io.err).toEqual({ code: 4, status: 'awaiting-approval' });
  });

  it('an environment variable beats them; the default profile beats the top level', async () => {
    config(`${account('')}maxJobCost: 100\nprofiles:\n  default:\n    maxJobCost: 120\n`);
    process.env.HTORDER_LOG_LEVEL = 'debug';
    expect(await plan()).toEqual({ code: 4, status: 'awaiting-approval' });
    expect(io.err).toContain('maxJobCost=120 (maxJobCost of profile \\"default\\"');
    process.env.HTORDER_MAX_JOB_COST = '1000';
    expect(await plan()).toEqual({ code: 0, status: 'valid' });
  });

  it('a selected profile beats the environment, and still takes the top level for what it does not say', async () => {
    config(`${account('')}maxLineQuantity: 10\nprofiles:\n  big:\n    maxJobCost: 1000\n`);
    process.env.HTORDER_MAX_JOB_COST = '100';
    // maxJobCost 1000 from the profile; the quantity 50 is over the file's maxLineQuantity.
    expect(await plan('--profile', 'big')).toEqual({ code: 4, status: 'awaiting-approval' });
    config(`${account('')}profiles:\n  big:\n    maxJobCost: 1000\n`);
    expect(await plan('--profile', 'big')).toEqual({ code: 0, status: 'valid' });
  });

  it('an unknown top-level key is an error with a suggestion', async () => {
    config(`${account('')}maxJobCots: 100\n`);
    expect(await runCli(['plan', order])).toBe(2);
    expect(io.err).toContain('unknown top-level key "maxJobCots" (did you mean "maxJobCost"?)');
  });
});

describe('--sandbox and a profile', () => {
  beforeEach(() => {
    config('profiles:\n  shop:\n    baseUrl: https://api.us.example.com\n    clientId: real\n    maxJobCost: 100\n');
  });

  it('a profile selected by HTORDER_PROFILE holds a job over its limit; the sandbox is the account', async () => {
    process.env.HTORDER_PROFILE = 'shop';
    expect(await plan('--sandbox'), io.err).toEqual({ code: 4, status: 'awaiting-approval' });
  });

  it('so does one selected by --profile', async () => {
    expect(await plan('--sandbox', '--profile', 'shop'), io.err).toEqual({ code: 4, status: 'awaiting-approval' });
  });

  it('an account flag is still refused with --sandbox', async () => {
    expect(await runCli(['plan', '--sandbox', '--base-url', 'https://api.us.example.com', order])).toBe(2);
    expect(io.err).toContain('--sandbox supplies its own account; it cannot be combined with --base-url');
  });
});

describe("a working-directory config never switches the hosts of the user's one-account settings", () => {
  const USER_TOP =
    'baseUrl: https://api.us.example.com\nauthUrl: https://auth.us.example.com\nrealm: htorder-us\nclientId: me\n';
  let home: string;
  let cwd: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'htorder-home-'));
    cwd = mkdtempSync(join(tmpdir(), 'htorder-cwd-'));
  });
  const user = (text: string): void => {
    mkdirSync(join(home, '.config/htorder'), { recursive: true });
    writeFileSync(join(home, '.config/htorder/config.yaml'), text, { mode: 0o600 });
  };
  const local = (text: string): void => writeFileSync(join(cwd, 'htorder.config.yaml'), text, { mode: 0o600 });
  const env = { HTORDER_CLIENT_SECRET: 'mine' };

  it.each([
    ['its top level', 'authUrl: https://auth.evil.example.net\n'],
    ['its default profile', 'profiles:\n  default:\n    authUrl: https://auth.evil.example.net\n'],
  ])('refuses %s changing authUrl of the top level of ~/.config', (_what, text) => {
    user(USER_TOP);
    local(text);
    expect(usageMessage(() => resolveConfig({ env, cwd, home }))).toContain(
      'its settings used with no profile selected (its top level and "default" profile) change authUrl',
    );
  });

  it("accepts a project's own top level when the user's file has none, and other keys", () => {
    user('profiles:\n  other: {}\n');
    local(`${USER_TOP}concurrency: 3\n`);
    expect(resolveConfig({ env, cwd, home }).concurrency).toBe(3);
    user(USER_TOP);
    local(`${USER_TOP}concurrency: 4\n`);
    expect(resolveConfig({ env, cwd, home }).concurrency).toBe(4);
  });
});
