import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ResultReport } from '../../src/report/model.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { CLI, ROOT } from './dist.js';
import type { NightFile } from './nights-orders.js';
import { type CreatedJob, NIGHTS_MAX_JOB_COST, type Recipe, sha256 } from './nights.js';

/**
 * The documented recipes as the nights simulation (nights.ts) plays them:
 *
 * - cron: the wrapper deploy/htorder-nightly (what the crontab line and the systemd timer run),
 *   `htorder run` over the shell's glob `exports/*.csv` of an ERP folder, twice a night, with the
 *   account, limits and state dir from a profile of a config file (HTORDER_CONFIG,
 *   HTORDER_PROFILE), against a sandbox server; htorder's calendar moved with HTORDER_CLOCK_OFFSET.
 * - watch: `htorder watch --sandbox` on a drop folder as a long-running service, two instances
 *   (a second instance is what gets killed), the sandbox's clock moved by `htorder sandbox clock`,
 *   which every process using the state dir follows.
 */

/** A finished command: its exit code and what it printed. */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command run to its end (at most `timeoutMs`, then SIGKILL and a failure naming it). */
function runCommand(
  file: string,
  args: string[],
  opts: { env: Record<string, string>; cwd: string; timeoutMs?: number },
): Promise<Ran> {
  const child = spawn(file, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: 'pipe' });
  child.stdin.end();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => err.push(d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${[file, ...args].join(' ')}: still running after ${opts.timeoutMs ?? 120_000} ms`));
    }, opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/** `htorder ARGS` (the built CLI); a code other than `expect` fails, naming the command and its output. */
export async function htorder(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  expect: number[] = [0],
): Promise<Ran> {
  const r = await runCommand(process.execPath, [CLI, ...args], { env, cwd });
  if (r.code === null || !expect.includes(r.code)) {
    throw new Error(`htorder ${args.join(' ')}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return r;
}

/** Polls until `check` says yes (at most `timeoutMs`). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function readJson<T>(file: string): Promise<T | undefined> {
  return readFile(file, 'utf8').then(
    (t) => JSON.parse(t) as T,
    () => undefined,
  );
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

/** A profile `nightly` with the shop's limit and the state dir (relative to the config file), plus `account` lines. */
function configText(account: string): string {
  return `profiles:\n  nightly:\n${account}    stateDir: state\n    maxJobCost: ${NIGHTS_MAX_JOB_COST}\n`;
}

const statusesOf = (r: ResultReport): string[] => r.jobs.map((j) => j.status);

// ---------------------------------------------------------------------------------------------
// cron: deploy/htorder-nightly over exports/*.csv, twice a night.

const WRAPPER = join(ROOT, 'deploy/htorder-nightly');

/** An ERP folder run by the cron wrapper: `erp/exports/`, its config file with the account, and `htorder` on the PATH. */
export interface CronFolder {
  erp: string;
  exports: string;
  /** The config file's folder: config.yaml, the secret, and the state dir `state/`. */
  etc: string;
  /** HTORDER_CONFIG and HTORDER_PROFILE, as the crontab line sets them, and htorder's calendar moved by `hours`. */
  env(hours?: number): Record<string, string>;
  /** deploy/htorder-nightly as cron starts it, in its own process group (a kill takes htorder with it). */
  startWrapper(extraEnv?: Record<string, string>): { child: ChildProcess; done: Promise<Ran> };
}

export async function cronFolder(root: string, sandbox: Sandbox): Promise<CronFolder> {
  const erp = join(root, 'erp');
  const exports = join(erp, 'exports');
  const etc = join(root, 'etc');
  const bin = join(root, 'bin');
  await Promise.all([
    mkdir(exports, { recursive: true }),
    mkdir(etc, { recursive: true }),
    mkdir(bin, { recursive: true }),
  ]);
  const account = sandbox.accounts.find((a) => a.name === 'us-demo');
  if (!account) throw new Error('the sandbox has no us-demo account');
  const region = sandbox.regions[account.region];
  await writeFile(join(etc, 'secret'), `${account.clientSecret}\n`, { mode: 0o600 });
  await writeFile(
    join(etc, 'config.yaml'),
    configText(
      `    baseUrl: ${region.baseUrl}\n    authUrl: ${region.authUrl}\n    realm: ${region.realm}\n` +
        `    clientId: ${account.clientId}\n    clientSecretFile: secret\n`,
    ),
    { mode: 0o600 },
  );
  // `htorder` on the wrapper's PATH: this checkout's build, as `npm install -g` would link it.
  await writeFile(join(bin, 'htorder'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  await chmod(join(bin, 'htorder'), 0o755);
  const env = (hours = 0): Record<string, string> => ({
    HTORDER_CONFIG: join(etc, 'config.yaml'),
    HTORDER_PROFILE: 'nightly',
    ...(hours === 0 ? {} : { HTORDER_CLOCK_OFFSET: `${hours}h` }),
  });
  const startWrapper = (extraEnv: Record<string, string> = {}): { child: ChildProcess; done: Promise<Ran> } => {
    const child = spawn('/bin/sh', [WRAPPER], {
      cwd: root,
      detached: true,
      env: {
        ...process.env,
        ...env(),
        HTORDER_NIGHTLY_DIR: erp,
        HTORDER_NIGHTLY_PATH: `${bin}:${dirname(process.execPath)}`,
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => err.push(d));
    const done = new Promise<Ran>((resolve) =>
      child.on('close', (code) =>
        resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
      ),
    );
    return { child, done };
  };
  return { erp, exports, etc, env, startWrapper };
}

export async function cronRecipe(root: string): Promise<Recipe> {
  const sandbox = await startSandbox({ port: 0 });
  const { erp, exports, etc, env: envAt, startWrapper: wrapperAt } = await cronFolder(root, sandbox);
  let hours = 0;
  // The sandbox server's clock is moved through its admin route; htorder's calendar with it.
  const env = (): Record<string, string> => envAt(hours);
  const startWrapper = (): { child: ChildProcess; done: Promise<Ran> } => wrapperAt(env());
  const created = async (): Promise<CreatedJob[]> =>
    (await sandbox.admin.jobs()).map((j) => ({ orderNumber: j.orderNumber ?? '?', jobNumber: j.jobNumber }));

  const recipe: Recipe = {
    name: 'cron',
    stateDir: join(etc, 'state'),
    workspace: erp,
    async advance(h) {
      hours += h;
      await sandbox.admin.advanceClock(h * 3_600_000);
    },
    created,
    async deliver(file: NightFile) {
      // The ERP writes beside the glob's folder and renames: cron never sees half a file.
      const tmp = join(erp, `.${file.name}.part`);
      await writeFile(tmp, file.text);
      await rename(tmp, join(exports, file.name));
    },
    async process({ kill }) {
      if (!kill) {
        const r = await startWrapper().done;
        return { note: `run exit ${r.code}`, exitCode: r.code ?? -1, output: r.stdout };
      }
      // Each create waits a little, so that the kill lands with orders in flight.
      await sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'latency', latencyMs: 300 }]);
      try {
        const before = (await created()).length;
        const run = startWrapper();
        let ended = false;
        void run.done.then(() => (ended = true));
        await until('the run sent something, or ended', async () => ended || (await created()).length > before);
        const pid = ended ? undefined : run.child.pid;
        if (pid !== undefined) process.kill(-pid, 'SIGKILL');
        const killed = pid !== undefined;
        const r = await run.done;
        const sent = (await created()).length - before;
        return {
          note: killed ? `run killed -9 after ${sent} create(s)` : `run ended (exit ${r.code}) before the kill`,
        };
      } finally {
        await sandbox.admin.clearFaults();
      }
    },
    async approve(name) {
      await htorder(['approve', join('exports', name)], env(), erp);
    },
    async discard(name) {
      await Promise.all(
        ['', '.result.json', '.result.csv', '.errors.txt', '.tracking.csv'].map((s) =>
          rm(join(exports, `${name}${s}`), { force: true }),
        ),
      );
    },
    async track() {
      await htorder(['track', 'exports'], env(), erp);
      return (await readdir(exports)).filter((f) => f.endsWith('.tracking.csv')).map((f) => join(exports, f));
    },
    async report(name, sha) {
      const report = await readJson<ResultReport>(join(exports, `${name}.result.json`));
      return report?.input.sha256 === sha ? report : undefined;
    },
    async waiting() {
      const names = (await readdir(exports)).filter((f) => f.endsWith('.result.json'));
      const held: string[] = [];
      for (const f of names) {
        const report = await readJson<ResultReport>(join(exports, f));
        if (report && statusesOf(report).includes('awaiting-approval')) held.push(f.replace(/\.result\.json$/, ''));
      }
      return held;
    },
    files: () => listFiles(erp),
    rss: async () => ({}),
    close: () => sandbox.close(),
  };
  return recipe;
}

// ---------------------------------------------------------------------------------------------
// watch: two `htorder watch --sandbox` instances on one drop folder.

interface Watcher {
  child: ChildProcess;
  /** Its log (JSON lines on stderr) so far. */
  log(): string;
  exited: Promise<number | null>;
}

export async function watchRecipe(root: string): Promise<Recipe> {
  const drop = join(root, 'drop');
  const etc = join(root, 'etc');
  await Promise.all([mkdir(drop, { recursive: true }), mkdir(etc, { recursive: true }), mkdir(join(root, 'logs'))]);
  await writeFile(join(etc, 'config.yaml'), configText(''), { mode: 0o600 });
  const env = { HTORDER_CONFIG: join(etc, 'config.yaml'), HTORDER_PROFILE: 'nightly' };
  const sandboxed = (args: string[]): string[] => [...args, '--sandbox'];

  /**
   * Two instances of the service on one folder, as a deployment of two replicas runs them: the
   * `second` is the one killed mid-night and started again, while the memory of the `service`,
   * which lives through every night, is followed night after night.
   */
  const WATCH_ARGS = ['--scan-interval', '250', '--stable-time', '500', '--lease', '10000'];
  const startWatcher = async (role: string): Promise<Watcher> => {
    const child = spawn(process.execPath, [CLI, 'watch', '--sandbox', drop, ...WATCH_ARGS], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const err: Buffer[] = [];
    // Also kept in logs/ (NIGHTS_KEEP=1 keeps the folder of a failed run to read them).
    const file = createWriteStream(join(root, 'logs', `${role}.log`), { flags: 'a' });
    child.stderr?.on('data', (d: Buffer) => {
      err.push(d);
      file.write(d);
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on('close', (code, signal) => {
        file.end(`[exited: code ${code}, signal ${signal}]\n`);
        resolve(code);
      }),
    );
    const w: Watcher = { child, log: () => Buffer.concat(err).toString('utf8'), exited };
    let gone = false;
    void exited.then(() => (gone = true));
    await until(`the ${role} watcher is watching`, async () => {
      if (gone) throw new Error(`the ${role} watcher exited: ${w.log()}`);
      return w.log().includes('watching for manifests');
    });
    return w;
  };
  const watchers: Record<string, Watcher> = {};
  watchers.service = await startWatcher('service');
  watchers.second = await startWatcher('second');
  /** Inputs each role claimed before its current process (a killed one's count is kept). */
  const claimedBefore: Record<string, number> = { service: 0, second: 0 };
  const claims = (role: string): number =>
    (claimedBefore[role] ?? 0) + (watchers[role]?.log().split('"claimed input"').length ?? 1) - 1;

  /** Delivered and not yet seen done with: name → sha256. */
  const pending = new Map<string, string>();
  const where = ['done', 'failed', 'held'];
  /** The newest report in done/, failed/ or held/ of an input with these bytes. */
  const reportOf = async (sha: string): Promise<{ file: string; report: ResultReport } | undefined> => {
    let best: { file: string; report: ResultReport; at: string } | undefined;
    for (const sub of where) {
      const names = (await readdir(join(drop, sub)).catch(() => [] as string[])).filter((f) =>
        f.endsWith('.result.json'),
      );
      for (const f of names) {
        const report = await readJson<ResultReport & { finishedAt?: string }>(join(drop, sub, f));
        if (report?.input.sha256 !== sha) continue;
        const at = report.finishedAt ?? '';
        if (!best || at > best.at) best = { file: join(sub, f), report, at };
      }
    }
    return best;
  };
  const settled = async (): Promise<boolean> => {
    const top = (await readdir(drop, { withFileTypes: true })).filter((e) => e.isFile() && !e.name.startsWith('.'));
    if (top.length > 0) return false;
    const processing = (await readdir(join(drop, 'processing')).catch(() => [] as string[])).filter(
      (f) => !f.startsWith('.'),
    );
    if (processing.length > 0) return false;
    for (const sha of pending.values()) if (!(await reportOf(sha))) return false;
    return true;
  };
  const created = async (): Promise<CreatedJob[]> => {
    const r = await htorder(sandboxed(['api', 'GET', '/_sandbox/jobs']), env, root);
    return (JSON.parse(r.stdout) as { orderNumber: string | null; jobNumber: number }[]).map((j) => ({
      orderNumber: j.orderNumber ?? '?',
      jobNumber: j.jobNumber,
    }));
  };

  const recipe: Recipe = {
    name: 'watch',
    stateDir: join(etc, 'state'),
    workspace: drop,
    async advance(h) {
      await htorder(['sandbox', 'clock', `+${h}h`], env, root);
    },
    created,
    async deliver(file) {
      // The writer writes, then leaves a marker (docs/watch.md): taken at the next scan.
      await writeFile(join(drop, file.name), file.text);
      await writeFile(join(drop, `${file.name}.done`), '');
      pending.set(file.name, sha256(file.text));
    },
    async process({ kill }) {
      let note = 'settled';
      if (kill) {
        const second = watchers.second as Watcher;
        const from = second.log().length;
        await until('the second instance claimed a file, or every file is done with', async () =>
          second.log().slice(from).includes('"claimed input"') ? true : await settled(),
        );
        const busy = second.log().slice(from).includes('"claimed input"');
        second.child.kill('SIGKILL');
        await second.exited;
        claimedBefore.second = claims('second');
        watchers.second = await startWatcher('second');
        note = busy
          ? 'second instance killed -9 holding a claim, restarted'
          : 'second instance killed -9 idle, restarted';
      }
      await until('every delivered file is done with', settled);
      pending.clear();
      return { note: `${note}; inputs claimed so far: service ${claims('service')}, second ${claims('second')}` };
    },
    async approve(name) {
      const held = join('drop', 'held', name);
      const before = await readFile(join(root, held)).catch(() => undefined);
      if (!before) throw new Error(`${held} is not there to approve`);
      await htorder(sandboxed(['approve', held]), env, root);
      // Taken back by a watcher at its next scan, and sent.
      const sha = sha256(before);
      await until(`${name} is approved, taken back and sent`, async () => {
        const r = await reportOf(sha);
        return r?.file.startsWith('done/') === true && statusesOf(r.report).every((s) => s === 'submitted');
      });
    },
    // Nothing is in the way: a re-send stays in held/, a broken file in failed/.
    discard: async () => undefined,
    async track() {
      await htorder(sandboxed(['track', join('drop', 'done')]), env, root);
      return (await readdir(join(drop, 'done')))
        .filter((f) => f.endsWith('.tracking.csv'))
        .map((f) => join(drop, 'done', f));
    },
    report: async (_name, sha) => (await reportOf(sha))?.report,
    async waiting() {
      const held = await readdir(join(drop, 'held')).catch(() => [] as string[]);
      return held.filter((f) => !f.startsWith('.') && !/\.(result\.json|result\.csv|errors\.txt)$/.test(f));
    },
    files: () => listFiles(drop),
    async rss() {
      // The median of a few readings a moment apart: one reading lands anywhere in a collection cycle.
      const out: Record<string, number> = {};
      for (const [role, w] of Object.entries(watchers)) {
        const readings: number[] = [];
        for (let i = 0; i < 5; i++) {
          const status = await readFile(`/proc/${w.child.pid}/status`, 'utf8').catch(() => '');
          const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
          if (kb) readings.push(Number(kb) * 1024);
          await new Promise((r) => setTimeout(r, 200));
        }
        readings.sort((a, b) => a - b);
        const median = readings[Math.floor(readings.length / 2)];
        if (median !== undefined) out[role] = median;
      }
      return out;
    },
    async close() {
      for (const w of Object.values(watchers)) w.child.kill('SIGTERM');
      await Promise.all(Object.values(watchers).map((w) => w.exited));
    },
  };
  return recipe;
}
