// What held jobs cost a running watcher: one order is sent, then `files` CSV inputs of `rows`
// orders each with the very same address and items (suspected duplicates under the default
// window) are dropped and held. Then, with held/ full, it measures the watcher's CPU while
// idle (from /proc, the watcher being a process of its own) and how long a new one-order
// input takes from its drop (with its `.done` marker) to done/, and counts the ledger's
// files. Prints numbers; asserts nothing.
//
//   npm run build && node bench/held-flood.mjs [files=1] [rows=6000] [idleSeconds=10] [newInputs=3]
//
// HTORDER_BENCH_NOFILE=N runs the watcher under `ulimit -n N` (what a service manager may set);
// it is then restarted under HTORDER_BENCH_RESTART_NOFILE (default 256), its held jobs kept.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const dist = new URL('../dist/', import.meta.url);
const { startSandbox } = await import(new URL('sandbox/index.js', dist).href);
const { sandboxEnv } = await import(new URL('core/config/sandbox-config.js', dist).href);
const CLI = new URL('cli/main.js', dist).pathname;

const files = Number(process.argv[2] ?? 1);
const rows = Number(process.argv[3] ?? 6000);
const idleSeconds = Number(process.argv[4] ?? 10);
const newInputs = Number(process.argv[5] ?? 3);

const HEADER =
  'orderNumber,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity';
const row = (order, name = 'Ana Ruiz') => `${order},UPSGND,${name},1 Main St,Austin,TX,78701,US,Asset,A10001,50`;
const csv = (orders, name) => `${HEADER}\n${orders.map((o) => row(o, name)).join('\n')}\n`;

/** user + system CPU time of `pid` in ms (/proc/PID/stat, clock ticks of 10 ms). */
async function cpuMs(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function waitUntil(check, what, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (exited || Date.now() > deadline)
      throw new Error(
        `${exited ? `the watcher ended (${exited})` : 'timed out'} waiting for ${what}:\n${log.slice(-3000)}`,
      );
    await sleep(20);
  }
}

async function count(dir) {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    n += e.isDirectory() ? await count(join(dir, e.name)) : 1;
  }
  return n;
}

const drop = await mkdtemp(join(tmpdir(), 'htorder-bench-held-drop-'));
const state = await mkdtemp(join(tmpdir(), 'htorder-bench-held-state-'));
const sandbox = await startSandbox({ port: 0 });
const env = {
  ...process.env,
  ...sandboxEnv(sandbox, 'us-demo'),
  HTORDER_STATE_DIR: state,
  HTORDER_ARTWORK_CHECK: 'off',
  HTORDER_LOG_LEVEL: 'info',
  XDG_CONFIG_HOME: state,
};

/** The running watcher: its process, its log so far, and how it ended (undefined while it runs). */
let child;
let log = '';
let exited;

/** Starts `htorder watch` as a process of its own, under `ulimit -n nofile` when given. */
async function startWatcher(nofile) {
  const watch = [process.execPath, CLI, 'watch', drop];
  const stdio = ['ignore', 'ignore', 'pipe'];
  log = '';
  exited = undefined;
  child = nofile
    ? spawn('sh', ['-c', `ulimit -n ${Number(nofile)} && exec "$@"`, 'sh', ...watch], { env, stdio })
    : spawn(watch[0], watch.slice(1), { env, stdio });
  child.stderr.on('data', (d) => {
    log += d;
  });
  child.on('exit', (code, signal) => {
    exited = `exit ${code ?? signal}`;
  });
  await waitUntil(() => log.includes('watching for manifests'), 'the watcher to start', 30_000);
}

async function stopWatcher() {
  if (!child) return;
  if (!exited) child.kill('SIGTERM');
  await new Promise((r) => (exited ? r() : child.on('exit', r)));
}

/** Drops a one-order input of its own content; ms from its drop (with a `.done` marker) to done/. */
async function newInput(name, order) {
  const started = performance.now();
  await writeFile(join(drop, name), csv([order], `Sam Lee ${order}`));
  await writeFile(join(drop, `${name}.done`), '');
  await waitUntil(() => existsSync(join(drop, 'done', name)), `${name} in done/`, 120_000);
  return performance.now() - started;
}

try {
  await startWatcher(process.env.HTORDER_BENCH_NOFILE);
  await writeFile(join(drop, 'first.csv'), csv(['FIRST-1']));
  await writeFile(join(drop, 'first.csv.done'), '');
  await waitUntil(() => existsSync(join(drop, 'done', 'first.csv')), 'first.csv in done/');

  const heldStart = performance.now();
  for (let f = 0; f < files; f++) {
    const orders = Array.from({ length: rows }, (_, i) => `FLOOD-${f}-${i + 1}`);
    await writeFile(join(drop, `flood-${f}.csv`), csv(orders));
    await writeFile(join(drop, `flood-${f}.csv.done`), '');
  }
  const ended = (f) => ['held', 'failed', 'done'].find((d) => existsSync(join(drop, d, `flood-${f}.csv`)));
  await waitUntil(
    () => Array.from({ length: files }, (_, f) => ended(f)).every(Boolean),
    'the flood inputs to end',
    Number(process.env.HTORDER_BENCH_TIMEOUT_MS ?? 600_000),
  );
  const heldMs = performance.now() - heldStart;
  const where = Array.from({ length: files }, (_, f) => ended(f));
  console.log(
    `htorder watch with held jobs (node ${process.version}): ${files} input(s) × ${rows} suspected duplicates ` +
      `→ ${where.join(', ')} in ${(heldMs / 1000).toFixed(1)} s; ledger files: ${await count(join(state, 'ledger'))}`,
  );

  await sleep(2000);
  const cpu0 = await cpuMs(child.pid);
  const t0 = performance.now();
  await sleep(idleSeconds * 1000);
  const cpu = ((await cpuMs(child.pid)) - cpu0) / (performance.now() - t0);
  console.log(`idle watcher CPU over ${idleSeconds} s: ${(cpu * 100).toFixed(1)} % of a core`);
  for (let i = 0; i < newInputs; i++) {
    console.log(`new one-order input, drop → done/: ${(await newInput(`new-${i}.csv`, `NEW-${i}`)).toFixed(0)} ms`);
  }

  // A restart under a low open-file limit, the held jobs and their ledger as they are.
  const restartNofile = Number(process.env.HTORDER_BENCH_RESTART_NOFILE ?? 256);
  await stopWatcher();
  await startWatcher(restartNofile);
  await sleep(5000);
  const failedScans = log.split('\n').filter((l) => l.includes('EMFILE')).length;
  const after = exited ? 'ended' : `${(await newInput('after-restart.csv', 'AFTER-1')).toFixed(0)} ms to done/`;
  console.log(
    `restarted under ulimit -n ${restartNofile}: ${exited ? `the watcher ${exited}` : 'running'}, ` +
      `${failedScans} log line(s) with EMFILE in 5 s; a new input: ${after}`,
  );
  if (exited) console.log(log.slice(-1500));
} finally {
  await stopWatcher();
  await sandbox.close();
  await rm(drop, { recursive: true, force: true });
  await rm(state, { recursive: true, force: true });
}
