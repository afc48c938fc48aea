import { expect } from 'vitest';
import { PutObjectCommand, ListObjectsV2Command, GetObjectCommand } from '@aws-sdk/client-s3';
import { mkdir, readdir, readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { LedgerEntry } from '../../src/storage/ledger/model.js';
import {
  chaosFaults,
  chaosManifest,
  type ChaosRig,
  checkReport,
  faultsFired,
  folderLedgerEntries,
  leaks,
  orderTrails,
  runWithKills,
  seeded,
  sleep,
  spawnHtorder,
  verifyAgainstSandbox,
  verifyLedger,
  type ChaosRow,
  type ExpectedItem,
  type Proc,
} from './chaos.js';
import { startTestS3 } from './s3.js';

/**
 * The chaos scenarios, parameterised so the long suite (`npm run test:chaos`) and the CI
 * slice (`npm test`) run the very same code with different sizes.
 */

export interface ScenarioResult {
  row: ChaosRow;
  problems: string[];
  exitCodes: (number | null)[];
  /** watch: the most inputs one watcher process had claimed and not yet finished at once (from its log). */
  mostFilesInFlight?: number;
}

/**
 * A fleet (docs/fleet.md): every process a host with a state dir of its own, all sharing one
 * ledger database, which is restarted once mid-run.
 */
export interface FleetLedger {
  /** What a host needs to reach the database: HTORDER_LEDGER_URL, PGPASSWORD, its wait. */
  env: Record<string, string>;
  entries(): Promise<LedgerEntry[]>;
  /** Stops the database for `downMs`, then starts it again with everything it had. */
  restart(downMs: number): Promise<void>;
}

/** Restarts the fleet's database once a third of the jobs exist (or when `stop` says the scenario is over). */
async function restartMidway(
  fleet: FleetLedger,
  progress: () => Promise<number>,
  jobs: number,
  stop: () => boolean,
): Promise<number> {
  while (!stop() && (await progress()) < jobs / 3) await sleep(50);
  if (stop()) return 0;
  await fleet.restart(2500);
  return 1;
}

export interface RunScenario {
  name: string;
  jobs: number;
  /** Manifests the jobs are split over; every process runs all of them. */
  files?: number;
  /** Processes running the same manifests at once. */
  processes?: number;
  /** SIGKILLs in total (spread over the processes). */
  kills: number;
  seed: number;
  /** The processes' time: past it, every one still running is killed and the scenario fails with their output's tails. */
  deadlineMs: number;
  fleet?: FleetLedger;
}

/** `htorder run FILE...` by 1–3 processes at once, each killed and restarted until exit 0. */
export async function runScenario(rig: ChaosRig, s: RunScenario): Promise<ScenarioResult> {
  const t0 = Date.now();
  await rig.sandbox.admin.reset();
  await rig.sandbox.admin.setFaults(chaosFaults(), s.seed);
  const stateDir = await mkdtemp(join(tmpdir(), 'htorder-chaos-state-'));
  const workDir = await mkdtemp(join(tmpdir(), 'htorder-chaos-work-'));
  const nFiles = s.files ?? 1;
  const expected = new Map<string, ExpectedItem[]>();
  const files: string[] = [];
  for (let f = 0; f < nFiles; f++) {
    const m = chaosManifest(`${s.name.replace(/\W+/g, '')}${f}`, Math.ceil(s.jobs / nFiles));
    for (const [k, v] of m.expected) expected.set(k, v);
    const file = join(workDir, `orders-${f}.yaml`);
    await writeFile(file, m.text);
    files.push(file);
  }
  const processes = s.processes ?? 1;
  const rnd = seeded(s.seed);
  const progress = async () => (await rig.sandbox.admin.jobs()).length;
  const { fleet } = s;
  // A fleet's hosts each keep a state dir of their own; its ledger is the database. A run that
  // finds the database away longer than its wait exits 3 and is started again.
  const hostEnv = (label: string) =>
    fleet ? { HTORDER_STATE_DIR: join(stateDir, label), HTORDER_LEDGER_WAIT_MS: '1000', ...fleet.env } : {};
  const pool = new ChaosProcesses(await chaosLogDir(s.name.replace(/\W+/g, '')), (logFile, label) =>
    spawnHtorder(['run', ...files], {
      env: rig.env({ HTORDER_STATE_DIR: stateDir, ...hostEnv(label) }),
      cwd: workDir,
      logFile,
    }),
  );
  pool.step = 'killing and restarting the processes until each exits 0';
  let loops: Awaited<ReturnType<typeof runWithKills>>[];
  let over = false;
  const restarts = fleet ? restartMidway(fleet, progress, expected.size, () => over) : Promise.resolve(0);
  try {
    loops = await withinDeadline(s.name, s.deadlineMs, pool, () =>
      Promise.all(
        Array.from({ length: processes }, (_, p) =>
          runWithKills(() => pool.start(`process-${p + 1}`), {
            kills: Math.ceil(s.kills / processes),
            rnd,
            progress,
          }),
        ),
      ),
    );
  } finally {
    over = true;
    await pool.killAll();
  }
  const dbRestarts = await restarts;
  const wallSeconds = (Date.now() - t0) / 1000;
  const faults = await faultsFired(rig.sandbox);
  await rig.sandbox.admin.clearFaults();

  const problems: string[] = [];
  const verdict = await verifyAgainstSandbox(rig.sandbox, expected);
  problems.push(
    ...verdict.duplicates.map((d) => `duplicate ${d}`),
    ...verdict.missing.map((m) => `missing ${m}`),
    ...verdict.unexpected.map((u) => `unexpected ${u}`),
    ...verdict.wrongItems,
  );
  const entries = fleet ? await fleet.entries() : await folderLedgerEntries(stateDir);
  if (entries.length !== expected.size)
    problems.push(`ledger has ${entries.length} entries, expected ${expected.size}`);
  const ledgerProblems = await verifyLedger(entries, rig.sandbox);
  problems.push(...ledgerProblems, ...orderTrails(ledgerProblems, pool.logs()));
  if (fleet && dbRestarts === 0)
    problems.push('the database was never restarted: the scenario proved less than it says');
  for (const file of files) {
    const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8')) as Record<string, unknown>;
    const mine = new Map(
      [...expected].filter(([k]) => k.startsWith(`${s.name.replace(/\W+/g, '')}${files.indexOf(file)}-`)),
    );
    problems.push(...(await checkReport(report, rig.sandbox, mine)).problems.map((p) => `${file}: ${p}`));
    problems.push(...(await scanFiles([`${file}.result.json`, `${file}.result.csv`], [rig.secret, await rig.token()])));
  }
  const output = loops.map((l) => l.output).join('\n');
  // Exit 1 says "a job is wrong, fix the manifest": faults and kills must never cause it.
  const exitCodes = loops.flatMap((l) => l.exitCodes);
  if (exitCodes.includes(1))
    problems.push(`a run exited 1 (exit codes ${exitCodes.join(',')}; each run's output in ${pool.logDir})`);
  // Debug logs on: the secret scan must have something to scan.
  if (!output.includes('"level":20')) problems.push('no debug log lines captured: the secret scan would prove nothing');
  problems.push(...leaks(output, [rig.secret, await rig.token()]).map((l) => `log: ${l}`));
  problems.push(...(await scanLedger(entries, [rig.secret])));
  return {
    row: {
      scenario: s.name,
      jobs: expected.size,
      faults,
      kills: loops.reduce((n, l) => n + l.kills, 0),
      runs: loops.reduce((n, l) => n + l.runs, 0),
      created: verdict.created,
      duplicates: verdict.duplicates.length,
      missing: verdict.missing.length,
      wallSeconds,
    },
    problems,
    exitCodes: loops.flatMap((l) => l.exitCodes),
  };
}

export interface WatchScenario {
  name: string;
  kind: 'folder' | 's3';
  files: number;
  jobsPerFile: number;
  /** Watchers running at once. */
  watchers: number;
  /** Inputs each watcher works on at once (--parallel-files); default the watcher's own. */
  parallelFiles?: number;
  kills: number;
  seed: number;
  /**
   * The whole scenario's time: past it, every watcher still running is killed with SIGKILL and
   * the scenario fails with the step it was at and the tail of each watcher's output.
   */
  deadlineMs: number;
  fleet?: FleetLedger;
}

/** Where each process's output is kept, one file per process: CHAOS_LOG_DIR, else the test's temporary folder. */
async function chaosLogDir(tag: string): Promise<string> {
  const base = process.env.CHAOS_LOG_DIR;
  if (base) await mkdir(base, { recursive: true });
  return mkdtemp(join(base ?? tmpdir(), `htorder-chaos-logs-${tag}-`));
}

/** The htorder processes of one scenario, every one it started (killed ones too), each with its log file. */
class ChaosProcesses {
  readonly all: { proc: Proc; log: string }[] = [];
  /** What the scenario is doing now, for the message of a scenario that ran out of time. */
  step = 'starting';
  /** Set when the scenario ran out of time: nothing more is started, and its loops end. */
  expired = false;
  constructor(
    readonly logDir: string,
    private readonly spawnOne: (logFile: string, label: string) => Proc,
  ) {}

  /** Starts one more; its output goes to `<label>-<n>.log` (n counts every process of the scenario). */
  start(label = 'watcher'): Proc {
    this.assertLive();
    const log = join(this.logDir, `${label}-${String(this.all.length + 1).padStart(3, '0')}.log`);
    const proc = this.spawnOne(log, label);
    this.all.push({ proc, log });
    return proc;
  }

  /** Throws once the scenario ran out of time (its loops call it, so none goes on in the background). */
  assertLive(): void {
    if (this.expired) throw new Error('the scenario ran out of time');
  }

  /** SIGKILL to every process still running; resolves when each has exited. */
  async killAll(): Promise<void> {
    const live = this.all.filter((w) => w.proc.child.exitCode === null && w.proc.child.signalCode === null);
    for (const w of live) w.proc.child.kill('SIGKILL');
    await Promise.all(live.map((w) => w.proc.exited));
  }

  /** Each process's whole output so far, named by its log file (`host-1-003.log`). */
  logs(): { label: string; output: string }[] {
    return this.all.map((w) => ({ label: basename(w.log), output: w.proc.output() }));
  }

  /** The last `chars` of each process's output, newest process last, with the log file's path. */
  tails(chars = 1500): string {
    return this.all
      .map((w, i) => {
        const state = w.proc.child.exitCode ?? w.proc.child.signalCode ?? 'running';
        return `--- process ${i + 1} (pid ${w.proc.child.pid}, ${state}; ${w.log}) ---\n${w.proc.output().slice(-chars)}`;
      })
      .join('\n');
  }
}

/**
 * Runs `body` within `ms`; past it the pool's processes are killed and the scenario fails with
 * what it was doing and every watcher's last output, instead of hanging until the test timeout.
 */
async function withinDeadline<T>(name: string, ms: number, pool: ChaosProcesses, body: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const step = pool.step;
      pool.expired = true;
      void pool
        .killAll()
        .then(() =>
          reject(new Error(`chaos scenario ${name} ran out of its ${ms / 1000} s while ${step}\n${pool.tails()}`)),
        );
    }, ms);
  });
  try {
    // Once expired, the body's own failure (a loop's assertLive, a killed process) is a symptom:
    // the deadline's message, with every process's output, is the one that says what happened.
    const settled = body().catch((err: unknown) => (pool.expired ? expired : Promise.reject(err)));
    return await Promise.race([settled, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `htorder watch` on a folder or a bucket prefix, `watchers` at once; one of them is killed
 * with SIGKILL at random moments and restarted, until `kills`; then every file must end in
 * done/ with complete reports and every order exist exactly once.
 */
export async function watchScenario(rig: ChaosRig, s: WatchScenario): Promise<ScenarioResult> {
  const t0 = Date.now();
  await rig.sandbox.admin.reset();
  await rig.sandbox.admin.setFaults(chaosFaults(), s.seed);
  const stateDir = await mkdtemp(join(tmpdir(), 'htorder-chaos-state-'));
  const drop = await mkdtemp(join(tmpdir(), 'htorder-chaos-drop-'));
  const s3 = s.kind === 's3' ? await startTestS3({ conditional: true }) : undefined;
  const prefix = 'incoming/';
  const target = s3 ? `s3://${s3.bucket}/${prefix}` : drop;
  const env = rig.env({
    HTORDER_STATE_DIR: stateDir,
    HTORDER_CONCURRENCY: '4',
    HTORDER_LOG_LEVEL: 'debug',
    // The kills here are the chaos, not a poison file: an input interrupted by several of them
    // must still be finished, so poison-file protection (default 3 interrupted runs) is set high.
    HTORDER_WATCH_MAX_INPUT_ATTEMPTS: '100',
    ...(s3?.env ?? {}),
    ...(s3 ? { HTORDER_BUCKET_LEDGER: `s3://${s3.bucket}/htorder-state/` } : {}),
  });
  const args = [
    'watch',
    target,
    '--scan-interval',
    '100',
    '--stable-time',
    '100',
    '--lease',
    '3000',
    '--retry-min',
    '200',
    '--retry-max',
    '1000',
    ...(s.parallelFiles === undefined ? [] : ['--parallel-files', String(s.parallelFiles)]),
  ];
  const rnd = seeded(s.seed);
  const outputs: string[] = [];
  const expected = new Map<string, ExpectedItem[]>();
  const names: string[] = [];
  const tag = s.name.replace(/\W+/g, '');
  const { fleet } = s;
  // A fleet's watchers are hosts: each keeps a state dir of its own across its restarts.
  const pool = new ChaosProcesses(await chaosLogDir(tag), (logFile, label) =>
    spawnHtorder(args, {
      env: fleet ? { ...env, HTORDER_STATE_DIR: join(stateDir, label), ...fleet.env } : env,
      cwd: drop,
      logFile,
    }),
  );
  let over = false;
  let restarts: Promise<number> = Promise.resolve(0);
  try {
    return await withinDeadline(s.name, s.deadlineMs, pool, async () => {
      for (let f = 0; f < s.files; f++) {
        const m = chaosManifest(`${tag}${f}`, s.jobsPerFile);
        for (const [k, v] of m.expected) expected.set(k, v);
        const name = `w${f}.yaml`;
        names.push(name);
        if (s3)
          await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${prefix}${name}`, Body: m.text }));
        else await writeFile(join(drop, name), m.text);
      }
      const list = async (under: string): Promise<string[]> => {
        if (!s3) return (await readdir(join(drop, under)).catch(() => [] as string[])).sort();
        const res = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}${under}/` }));
        return (res.Contents ?? []).map((o) => o.Key!.slice(`${prefix}${under}/`.length)).sort();
      };
      const read = async (under: string, name: string): Promise<string> => {
        if (!s3) return readFile(join(drop, under, name), 'utf8');
        const res = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${prefix}${under}/${name}` }));
        return res.Body!.transformToString();
      };
      const finished = async (): Promise<boolean> => {
        const done = await list('done');
        const failed = (await list('failed')).filter((n) => !n.includes('.result.') && !n.endsWith('.errors.txt'));
        if (failed.length > 0)
          throw new Error(
            `${failed.join(', ')} went to failed/: ${await read('failed', `${failed[0]}.errors.txt`).catch(() => '?')}`,
          );
        return names.every((n) => done.includes(n) && done.includes(`${n}.result.json`));
      };

      const procs: Proc[] = [];
      for (let i = 0; i < s.watchers; i++) procs.push(pool.start(`host-${i + 1}`));
      let kills = 0;
      let runs = s.watchers;
      const progress = async () => (await rig.sandbox.admin.jobs()).length;
      if (fleet) restarts = restartMidway(fleet, progress, expected.size, () => over);
      pool.step = 'waiting for every file to reach done/';
      while (!(await finished())) {
        pool.assertLive();
        if (kills < s.kills) {
          pool.step = `waiting for progress before kill ${kills + 1}`;
          const before = await progress();
          const want = 1 + Math.floor(rnd() * 10);
          const t = Date.now();
          while ((await progress()) < before + want && Date.now() - t < 5000 && !(await finished())) await sleep(20);
          await sleep(Math.floor(rnd() * 300));
          const victim = Math.floor(rnd() * procs.length);
          const p = procs[victim]!;
          pool.step = `waiting for watcher ${victim + 1} to die of kill ${kills + 1}`;
          p.child.kill('SIGKILL');
          await p.exited;
          outputs.push(p.output());
          kills++;
          procs[victim] = pool.start(`host-${victim + 1}`);
          runs++;
          pool.step = 'waiting for every file to reach done/';
        } else await sleep(100);
      }
      // A watcher restarted a moment ago may not have its signal handlers yet: wait until
      // every one is watching, so SIGTERM tests the graceful stop rather than start-up.
      pool.step = 'waiting for the watchers to be watching before SIGTERM';
      for (const p of procs) await waitUntil(() => p.output().includes('watching for manifests'), 30_000);
      pool.step = 'waiting for the watchers to exit on SIGTERM';
      for (const p of procs) p.child.kill('SIGTERM');
      const codes = await Promise.all(procs.map((p) => p.exited));
      over = true;
      const dbRestarts = await restarts;
      pool.step = 'checking the results';
      outputs.push(...procs.map((p) => p.output()));
      const wallSeconds = (Date.now() - t0) / 1000;
      const faults = await faultsFired(rig.sandbox);
      await rig.sandbox.admin.clearFaults();

      const problems: string[] = [];
      if (codes.some((c) => c !== 0)) problems.push(`watchers exited ${codes.join(',')} on SIGTERM`);
      const verdict = await verifyAgainstSandbox(rig.sandbox, expected);
      problems.push(
        ...verdict.duplicates.map((d) => `duplicate ${d}`),
        ...verdict.missing.map((m) => `missing ${m}`),
        ...verdict.unexpected.map((u) => `unexpected ${u}`),
        ...verdict.wrongItems,
      );
      const processing = (await list('processing')).filter((n) => !n.startsWith('.'));
      if (processing.length > 0) problems.push(`left in processing/: ${processing.join(', ')}`);
      const doneNames = await list('done');
      const twice = doneNames.filter((n) => /\d{8}T\d+Z/.test(n));
      if (twice.length > 0) problems.push(`finished twice: ${twice.join(', ')}`);
      for (let f = 0; f < names.length; f++) {
        const text = await read('done', `${names[f]}.result.json`);
        const mine = new Map([...expected].filter(([k]) => k.startsWith(`${tag}${f}-`)));
        problems.push(
          ...(await checkReport(JSON.parse(text) as Record<string, unknown>, rig.sandbox, mine)).problems.map(
            (p) => `${names[f]}: ${p}`,
          ),
        );
        const csv = await read('done', `${names[f]}.result.csv`);
        problems.push(...leaks(text + csv, [rig.secret]).map((l) => `${names[f]} reports: ${l}`));
      }
      let entries: LedgerEntry[];
      if (fleet) entries = await fleet.entries();
      else if (s3) {
        entries = [];
        // The bucket ledger: one JSON object per order under the state prefix's ledger/.
        let token: string | undefined;
        do {
          const res = await s3.client.send(
            new ListObjectsV2Command({
              Bucket: s3.bucket,
              Prefix: 'htorder-state/ledger/',
              ContinuationToken: token,
            }),
          );
          for (const o of res.Contents ?? []) {
            if (!o.Key!.endsWith('.json')) continue;
            const body = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: o.Key! }));
            entries.push(JSON.parse(await body.Body!.transformToString()) as LedgerEntry);
          }
          token = res.NextContinuationToken;
        } while (token);
      } else entries = await folderLedgerEntries(stateDir);
      if (fleet && dbRestarts === 0)
        problems.push('the database was never restarted: the scenario proved less than it says');
      if (entries.length !== expected.size)
        problems.push(`ledger has ${entries.length} entries, expected ${expected.size}`);
      const ledgerProblems = await verifyLedger(entries, rig.sandbox);
      problems.push(...ledgerProblems, ...orderTrails(ledgerProblems, pool.logs()));
      if (!outputs.join('').includes('"level":20'))
        problems.push('no debug log lines captured: the secret scan would prove nothing');
      problems.push(...leaks(outputs.join('\n'), [rig.secret, await rig.token()]).map((l) => `log: ${l}`));
      problems.push(...(await scanLedger(entries, [rig.secret])));
      return {
        row: {
          scenario: s.name,
          jobs: expected.size,
          faults,
          kills,
          runs,
          created: verdict.created,
          duplicates: verdict.duplicates.length,
          missing: verdict.missing.length,
          wallSeconds,
        },
        problems,
        exitCodes: codes,
        mostFilesInFlight: Math.max(0, ...outputs.map(mostInFlight)),
      };
    });
  } finally {
    over = true;
    await pool.killAll();
    await restarts.catch(() => 0);
    await rig.sandbox.admin.clearFaults();
    await s3?.close();
  }
}

/**
 * The most inputs a watcher's log shows claimed (or resumed) and not yet ended (done, failed,
 * set aside, waiting for a retry, lost) at once.
 */
function mostInFlight(output: string): number {
  const now = new Set<string>();
  let most = 0;
  const ends = ['input done', 'input failed', 'input set aside', 'API or store unavailable', 'claim lost'];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    let l: { msg?: string; file?: string };
    try {
      l = JSON.parse(line) as { msg?: string; file?: string };
    } catch {
      continue;
    }
    const name =
      String(l.file ?? '')
        .split('/')
        .pop() ?? '';
    if (l.msg === 'claimed input' || l.msg?.startsWith('resuming')) now.add(name);
    else if (ends.some((e) => l.msg?.startsWith(e))) now.delete(name);
    most = Math.max(most, now.size);
  }
  return most;
}

async function scanFiles(paths: string[], secrets: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const text = await readFile(p, 'utf8').catch(() => '');
    out.push(...leaks(text, secrets).map((l) => `${p}: ${l}`));
  }
  return out;
}

async function scanLedger(entries: LedgerEntry[], secrets: string[]): Promise<string[]> {
  return leaks(JSON.stringify(entries), secrets).map((l) => `ledger: ${l}`);
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await sleep(25);
}

/** The verdict every chaos scenario must reach: no problem found, no duplicate, nothing missing. */
export function expectExactlyOnce(r: ScenarioResult): void {
  expect(r.problems).toEqual([]);
  expect(r.row.duplicates).toBe(0);
  expect(r.row.missing).toBe(0);
}
