// `npm run bench:watch`: how fast `htorder watch` drains a backlog.
//
// 1. Backlog: BENCH_FILES (600) one-order files (2 items each) already in the drop folder when
//    the watcher starts, as after an outage of the shop's integration (their mtimes a minute
//    old: complete files). The real CLI (`dist/cli/main.js watch DIR`, default options) in a
//    child process against the sandbox with BENCH_LATENCY_MS (25) added to every call and
//    HTORDER_CONCURRENCY=BENCH_CONCURRENCY (8). Wall = from spawning the watcher until the
//    last input's `input done` log line (written after it moved to done/).
// 2. For contrast: one file of BENCH_BIG_JOBS (2,000) jobs × 2 items, the same way.
//
// The API lower bound is what the API itself imposes: (2 calls per order + the lookups) ×
// latency ÷ concurrency. A fresh ledger also searches the account for the orders of the first
// inputs (verifyNewOrders=auto, until the ledger vouches for the account; see
// docs/configuration.md): those searches are counted and shown apart, and also in a second
// ratio, against the bound of every call actually made.
//
// Each scenario runs BENCH_RUNS (3) times; every run's numbers and the spread are printed,
// with the load average (the machine may be shared) and the watcher's CPU time. The drop folder
// and state directory are made under BENCH_DIR (default the OS temp folder): each input creates
// and deletes about 10 small files (claim, private copy, crash counter, ledger entries and locks,
// reports), which costs much more CPU on some file systems than others (an ext4 without a journal
// scans its recently deleted inodes on every create), so the folder's file system is part of the
// result. BENCH_BIG_JOBS=0 skips the big file. BENCH_PROF=1 writes --cpu-prof files to
// /tmp/benchprof. --cli FILE (BENCH_CLI): another build's dist/cli/main.js, for before/after.
// Prints numbers; exit code 1 only if an input did not end in done/.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { orderableAssets, sandboxEnv } from './lib/demo-account.mjs';
import { endOfOptions, load, option, seconds, spread, times } from './lib/measure.mjs';
import { startSandbox } from '../dist/sandbox/index.js';

const FILES = Number(process.env.BENCH_FILES ?? 600);
const BIG_JOBS = Number(process.env.BENCH_BIG_JOBS ?? 2000);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 25);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DIR = process.env.BENCH_DIR ?? tmpdir();
const CLI = option('--cli', 'BENCH_CLI', new URL('../dist/cli/main.js', import.meta.url).pathname);
endOfOptions();

const sandbox = await startSandbox({ port: 0 });
const assets = await orderableAssets(sandbox, 20);
let failures = 0;
/** Every folder a run made, removed at the end even when a run throws (nothing left in /tmp). */
const made = new Set();

const manifest = (orders, tag) => {
  const lines = ['version: 1', 'jobs:'];
  for (let i = 0; i < orders; i++) {
    lines.push(
      `  - orderNumber: ${tag}-${i}`,
      // Named after the order: each order is new content, never a suspected duplicate of another.
      `    deliveryAddress: { deliveryMethod: UPSGND, contactName: Ana Ruiz ${tag}-${i}, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701", countryCodeISO2: US }`,
      '    items:',
      `      - { itemType: Asset, code: ${assets[i % assets.length]}, quantity: 50 }`,
      `      - { itemType: Asset, code: ${assets[(i + 7) % assets.length]}, quantity: 50 }`,
    );
  }
  return `${lines.join('\n')}\n`;
};

/** One watcher run over `files` (name → text) queued before it starts. */
async function measure(label, run, files, orders) {
  const work = await mkdtemp(join(DIR, 'htorder-bench-watch-'));
  made.add(work);
  const drop = join(work, 'drop');
  await mkdir(drop);
  // A minute old: the backlog of an outage, not files being written right now.
  const old = new Date(Date.now() - 60_000);
  for (const [name, text] of files) {
    await writeFile(join(drop, name), text);
    await utimes(join(drop, name), old, old);
  }
  await sandbox.admin.reset();
  await sandbox.admin.setFaults([{ route: '*', kind: 'latency', latencyMs: LATENCY }]);
  await sandbox.admin.resetCalls();
  const env = {
    ...process.env,
    ...sandboxEnv(sandbox, 'us-demo'),
    HTORDER_STATE_DIR: join(work, 'state'),
    HTORDER_CONCURRENCY: String(CONCURRENCY),
  };
  const loadAtStart = load();
  const simulatorCpu = process.cpuUsage();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/benchprof'] : []), CLI, 'watch', drop],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let done = 0;
  let failed = 0;
  let rest = '';
  let wallMs;
  const allDone = new Promise((resolve) => {
    child.stderr.on('data', (chunk) => {
      const text = rest + chunk;
      const lines = text.split('\n');
      rest = lines.pop();
      for (const line of lines) {
        // The daemon's own log (JSON lines, info level by default): cheaper to count than to poll done/.
        if (line.includes('"msg":"input done"')) done++;
        else if (line.includes('"msg":"input failed')) failed++;
      }
      if (done + failed >= files.size && wallMs === undefined) {
        wallMs = performance.now() - started;
        resolve();
      }
    });
    exited.then(resolve);
  });
  const timeout = setTimeout(() => child.kill('SIGTERM'), 600_000);
  await allDone;
  clearTimeout(timeout);
  const cpu = await cpuOf(child.pid);
  // This process is the simulator: its CPU competes with the watcher's for the same cores.
  const simulator = process.cpuUsage(simulatorCpu);
  const simulatorMs = (simulator.user + simulator.system) / 1000;
  child.kill('SIGTERM');
  await exited;
  const calls = await sandbox.admin.calls();
  const created = (await sandbox.admin.jobs()).length;
  const inDone = (await readdir(join(drop, 'done'))).filter((n) => n.endsWith('.yaml')).length;
  // Removed at the end, not now: on a file system that keeps freed inodes from reuse for a
  // while (ext4 without a journal: 1–6 minutes), deleting this run's thousands of files would
  // make every file the next run creates cost more — a cost of the benchmark, not of the watcher.
  if (inDone !== files.size || created !== orders) failures++;

  const total = Object.values(calls).reduce((a, b) => a + b, 0);
  const posts = calls['POST /Jobs'] ?? 0;
  // The new-ledger verification (and settling) search: GET /Jobs/active?orderNumber=….
  const searches = calls['GET /Jobs/active'] ?? 0;
  const lookups = total - posts - searches;
  const bound = ((2 * orders + lookups) * LATENCY) / CONCURRENCY;
  const boundAll = (total * LATENCY) / CONCURRENCY;
  const r = {
    wallMs: wallMs ?? Number.NaN,
    ratio: (wallMs ?? Number.NaN) / bound,
    ratioAll: (wallMs ?? Number.NaN) / boundAll,
    filesPerSecond: files.size / ((wallMs ?? Number.NaN) / 1000),
  };
  console.log(
    `  ${label} run ${run}: ${seconds(r.wallMs)}, ${r.filesPerSecond.toFixed(1)} files/s, ` +
      `${(orders / (r.wallMs / 1000)).toFixed(0)} orders/s; bound ${seconds(bound)} ` +
      `((2×${orders} + ${lookups} lookups) × ${LATENCY} ms / ${CONCURRENCY}) → ratio ${r.ratio.toFixed(2)}; ` +
      `+${searches} new-ledger searches → ${r.ratioAll.toFixed(2)} × all ${total} calls; ` +
      `${inDone}/${files.size} in done/, ${created} jobs created${failed ? `, ${failed} FAILED` : ''}; ` +
      `watcher CPU ${cpu === undefined ? '?' : `${((cpu.user + cpu.system) / 1000).toFixed(2)} s (${(cpu.system / 1000).toFixed(2)} s in the kernel)`}, simulator CPU ` +
      `${seconds(simulatorMs)}; ${loadAtStart} at the start`,
  );
  return r;
}

/** The spread (min–max, median) of each number of a scenario's runs. */
function summary(label, rs) {
  const of = (k) => rs.map((r) => r[k]);
  console.log(
    `  ${label}: ratio ${spread(of('ratio'), times)}; wall ${spread(of('wallMs'), seconds)}; ` +
      `files/s ${spread(of('filesPerSecond'), (n) => n.toFixed(1))}; vs all calls ${spread(of('ratioAll'), times)}`,
  );
}

try {
  console.log(
    `htorder watch backlog (node ${process.version}, ${LATENCY} ms per call, concurrency ${CONCURRENCY}, ` +
      `folders under ${DIR}, goal ratio <= 1.5)`,
  );
  const backlog = new Map();
  for (let f = 0; f < FILES; f++)
    backlog.set(`order-${String(f).padStart(5, '0')}.yaml`, manifest(1, `BL${String(f).padStart(5, '0')}`));
  const rs = [];
  for (let run = 1; run <= RUNS; run++) rs.push(await measure(`${FILES} files × 1 order`, run, backlog, FILES));
  const big = new Map([['big.yaml', manifest(BIG_JOBS, 'BIG')]]);
  const bs = [];
  for (let run = 1; BIG_JOBS > 0 && run <= RUNS; run++)
    bs.push(await measure(`1 file × ${BIG_JOBS} orders`, run, big, BIG_JOBS));
  console.log('spread');
  summary(`${FILES} files × 1 order`, rs);
  if (bs.length > 0) summary(`1 file × ${BIG_JOBS} orders`, bs);
  if (failures > 0) process.exitCode = 1;
} finally {
  await sandbox.close();
  for (const dir of made) await rm(dir, { recursive: true, force: true });
}

/** CPU time (user and system, ms) of a running process, from /proc (Linux); undefined elsewhere. */
async function cpuOf(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
  } catch {
    return undefined;
  }
}
