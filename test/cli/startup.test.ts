import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireDist } from '../support/dist.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * Startup cost is kept low by loading each command's implementation only when it runs
 * (src/cli/program.ts). Timing would be flaky, so this test checks the cause instead: which
 * modules a process resolves, recorded by a `node --import` resolve hook.
 */
const RECORDER = fileURLToPath(new URL('./fixtures/record-imports.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'htorder-startup-'));

/** Packages and stages that only some commands need: none of them for --version or --help. */
const HEAVY = [
  /node_modules\/(ajv|ajv-formats|undici|pino|pino-pretty|@aws-sdk|chokidar|prom-client|yaml|csv-parse|csv-stringify|iconv-lite|p-limit)\//,
  /\/dist\/(api\/client|manifest|schema|pipeline|sources|ledger|observe|resolve|report|track|log|ui)\//,
];

function modulesOf(args: string[], name: string): string[] {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', RECORDER, CLI, ...args], {
    env: { ...process.env, HTORDER_IMPORT_LOG: log },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.status, r.stderr).toBe(args[0] === 'check' ? 1 : 0);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const heavyIn = (mods: string[]): string[] => mods.filter((m) => HEAVY.some((re) => re.test(m)));

/** The environment of a process whose API nobody answers (port 9), recording its imports into `log`. */
function unreachableApi(log: string, stateDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HTORDER_IMPORT_LOG: log,
    HTORDER_BASE_URL: 'http://127.0.0.1:9',
    HTORDER_AUTH_URL: 'http://127.0.0.1:9',
    HTORDER_REALM: 'r',
    HTORDER_CLIENT_ID: 'c',
    HTORDER_CLIENT_SECRET: 's',
    HTORDER_STATE_DIR: join(dir, stateDir),
  };
}

describe('startup: heavy modules load only for the commands that need them', () => {
  beforeAll(() => requireDist());

  // Not ajv: the manifest validator is generated at build time (issue 16), ajv loads for --mapping only.
  it('the recorder sees what a working command loads (control: check loads the readers)', () => {
    writeFileSync(join(dir, 'x.yaml'), 'version: 1\njobs: []\n');
    const mods = modulesOf(['check', join(dir, 'x.yaml')], 'check');
    expect(mods.some((m) => /\/dist\/manifest\//.test(m))).toBe(true);
    // The fast YAML reader took it: the yaml package is loaded only for what it leaves.
    expect(mods.filter((m) => /node_modules\/yaml\//.test(m))).toEqual([]);
    writeFileSync(join(dir, 'y.yaml'), 'version: 1\njobs: &none []\n');
    expect(modulesOf(['check', join(dir, 'y.yaml')], 'check-y').some((m) => /node_modules\/yaml\//.test(m))).toBe(true);
    // The dashboard is loaded only by `htorder ui` and `watch --ui`.
    expect(mods.filter((m) => /\/dist\/ui\//.test(m))).toEqual([]);
  }, 30_000);

  it('--version loads commander and the command modules only', () => {
    const mods = modulesOf(['--version'], 'version');
    expect(mods.some((m) => m.endsWith('/dist/cli/program.js'))).toBe(true);
    expect(heavyIn(mods)).toEqual([]);
  }, 30_000);

  it('--help and a command --help load nothing heavy', () => {
    expect(heavyIn(modulesOf(['--help'], 'help'))).toEqual([]);
    expect(heavyIn(modulesOf(['watch', '--help'], 'watch-help'))).toEqual([]);
  }, 30_000);

  it('watch of a folder reaches its ready line without the mapping code (jsonata, the yaml package) or, with no health port, prom-client', async () => {
    const log = join(dir, 'watch.log');
    writeFileSync(log, '');
    const drop = mkdtempSync(join(dir, 'drop-'));
    const child = spawn(process.execPath, ['--import', RECORDER, CLI, 'watch', drop], {
      // An API nobody answers: the sign-in at start fails quietly; nothing is dropped.
      env: unreachableApi(log, 'watch-state'),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      let text = '';
      child.stderr.on('data', (c: Buffer) => {
        text += String(c);
        if (text.includes('watching for manifests')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`watch exited ${code} before watching: ${text}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const mods = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(mods.some((m) => m.endsWith('/dist/app/watch-daemon.js'))).toBe(true);
    expect(
      mods.filter((m) =>
        /node_modules\/(jsonata|yaml|prom-client)\/|\/dist\/manifest\/mapping\/(load-mapping|mapped-rows|expressions)\.js/.test(
          m,
        ),
      ),
    ).toEqual([]);
  }, 30_000);

  it('run asks for its token before it loads the pipeline (readers, stages), which loads while it is in flight', () => {
    const log = join(dir, 'run.log');
    writeFileSync(log, '');
    writeFileSync(join(dir, 'r.yaml'), 'version: 1\njobs: []\n');
    // An API nobody answers: the token request fails (exit 3, unavailable), after it was made.
    const r = spawnSync(process.execPath, ['--import', RECORDER, CLI, 'run', join(dir, 'r.yaml')], {
      env: unreachableApi(log, 'run-state'),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(3);
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    const token = lines.findIndex((l) => /^request POST .*\/token$/.test(l));
    expect(token, lines.join('\n')).toBeGreaterThan(0);
    const before = lines.slice(0, token);
    expect(before.some((m) => m.endsWith('/dist/api/client.js'))).toBe(true);
    expect(before.filter((m) => /\/dist\/(manifest|pipeline)\//.test(m))).toEqual([]);
    // Control: the pipeline was loaded, after the request.
    expect(lines.slice(token).some((m) => m.endsWith('/dist/pipeline/process-input.js'))).toBe(true);
    // Control for the next test: this run logged its retries at `warn`.
    expect(r.stderr).toContain('token request failed; retrying');
  }, 30_000);

  it('a run and a check of a template CSV load no code they do not use (pretty logs, mappings, yaml, routes, encodings)', () => {
    // One asset reorder at an address in the API's codes: the default template, UTF-8, no config file.
    const csv = join(dir, 'one.csv');
    writeFileSync(
      csv,
      'orderNumber,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity\n' +
        'PO-LEAN-1,UPSGND,Ana Ruiz,1 Main St,Austin,TX,78701,US,Asset,A10001,50\n',
    );
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('HTORDER_')) delete env[k];
    // stderr is a pipe, not a terminal: log lines are JSON, so the pretty printer is never needed.
    const unused =
      /node_modules\/(pino-pretty|jsonata|yaml|picomatch|iconv-lite)\/|\/dist\/manifest\/mapping\/(load-mapping|recognise|expressions)\.js/;
    for (const [name, args, status] of [
      ['csv-run', ['run', '--sandbox', csv], 0],
      ['csv-check', ['check', csv], 0],
    ] as const) {
      const log = join(dir, `${name}.log`);
      writeFileSync(log, '');
      const r = spawnSync(process.execPath, ['--import', RECORDER, CLI, ...args], {
        env: { ...env, HTORDER_IMPORT_LOG: log },
        cwd: dir,
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status, r.stderr).toBe(status);
      const mods = readFileSync(log, 'utf8').split('\n').filter(Boolean);
      // Control: the recorder saw the CSV reader, and the logger's pino, which CommonJS loads.
      expect(mods.some((m) => m.endsWith('/dist/manifest/csv/csv-scanner.js'))).toBe(true);
      if (name === 'csv-run') expect(mods.some((m) => /node_modules\/pino\//.test(m))).toBe(true);
      expect(mods.filter((m) => unused.test(m))).toEqual([]);
    }
  }, 60_000);

  it('a run at the default level that logs nothing writes no log line', () => {
    writeFileSync(join(dir, 'q.yaml'), manifest('PO-QUIET', 1));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('HTORDER_')) delete env[k];
    const r = spawnSync(process.execPath, [CLI, 'run', '--sandbox', '--json', join(dir, 'q.yaml')], {
      env,
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).inputs[0].jobs[0]).toMatchObject({ orderNumber: 'PO-QUIET-1', status: 'submitted' });
    // stderr carries the human summary, and no log line (they are JSON: not a terminal).
    expect(r.stderr).toContain('1 job: 1 submitted');
    expect(r.stderr).not.toContain('"level":');
  }, 30_000);

  it('htorder sandbox reaches its ready line with the simulator alone (no client, no pipeline)', async () => {
    const log = join(dir, 'sandbox.log');
    writeFileSync(log, '');
    const child = spawn(process.execPath, ['--import', RECORDER, CLI, 'sandbox'], {
      env: { ...process.env, HTORDER_IMPORT_LOG: log },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ready = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (c: Buffer) => {
        text += String(c);
        if (text.includes('\n')) resolve(text);
      });
      child.on('exit', (code) => reject(new Error(`sandbox exited ${code} before its ready line`)));
    });
    expect(JSON.parse(ready)).toHaveProperty('url');
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const mods = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(mods.some((m) => /\/dist\/sandbox\//.test(m))).toBe(true);
    expect(heavyIn(mods)).toEqual([]);
  }, 30_000);
});
