#!/usr/bin/env node
/**
 * `npm run bench` — `htorder run` against a bare client on the same simulator, in the same run.
 *
 * For each size in --jobs (default 1,000; a list such as 1000,10000,100000 runs each in turn): a
 * manifest of that many jobs × 5 reorder lines (Asset items), one delivery address per job, as
 * a CSV of the default template (--format csv, the default) or YAML (--format yaml, the address in
 * `defaults`; YAML over 10 MB is refused, so at most about 20,000 jobs), run by the real CLI
 * entry (`node dist/cli/main.js run FILE`) with HTORDER_CONCURRENCY=--concurrency (8) against
 * the sandbox with --latency ms (25) added to every call. Beside it, a bare client in its own
 * process (lib/bare-client.mjs) sends only the same POST /Jobs calls — each job's dry run and
 * create, bodies prebuilt, undici `request`, the same concurrency. Both are timed as whole
 * processes (spawn → exit), alternating (odd runs htorder first, even runs the bare client
 * first), the sandbox reset before each, so each sees the same simulator. Prints every run's
 * ratio, CPU time and peak RSS, the spread (min–max, median), the calls per endpoint, the API
 * bound (calls × latency ÷ concurrency), and the goals: run ≤ 1.05× the bare client, peak RSS ≤
 * 512 MB.
 *
 * A warm-up run first (not timed) vouches the ledger for the account — as on every run but a
 * first one, new orders need no search before they are sent — warms the simulator, and yields
 * the exact request bodies the bare client sends (with other order numbers).
 *
 * Then --first-runs runs (as many as --runs by default): each with a fresh state dir, whose
 * ledger cannot vouch for the account, so every order is checked on the account before it is
 * sent (one listing of the account's few jobs), against the bare client again; the calls per job
 * and the ratio, with the goal: ≤ 1.05× the bare client and ≤ 2.02 calls per job.
 *
 * Options: --runs N (5), --first-runs N (--runs), --jobs N[,N…] (1000), --format csv|yaml (csv),
 * --latency MS (25), --concurrency N (8), --bare 0 (no bare client: htorder's time, CPU and
 * memory alone, after a warm-up of one job that vouches the ledger), --memory (each run's
 * memory as it grows: process.memoryUsage() per 1,000 jobs, lib/report-peak.mjs), --prof DIR
 * (a --cpu-prof profile of each htorder run into DIR), --heap-prof DIR (a --heap-prof sampling
 * profile of each htorder run into DIR: the allocations still live when it exits), --cli FILE (another build's
 * dist/cli/main.js, for before/after), --reports-cli FILE (after each size's runs, one more
 * run of this build and one of FILE's on the same input, each with a fresh state dir: their
 * result.json, result.csv and errors.txt must say the same, timestamps and job numbers aside;
 * lib/same-reports.mjs), --trace (each run's phases for both processes: the first POST /Jobs,
 * the POSTs, a POST's mean, median and 99th-percentile time as the client saw it and the POSTs
 * in flight on average, the time from the last answer to exit; lib/report-peak.mjs), --customers (a
 * contact of its own per job: every order is content of its own, with its own entry in the
 * ledger's content index, as a shop's night of many customers; by default the jobs of a run
 * share a few contents), --floor (beside the bare client, the same client recording each order's
 * intent durably before its create and its outcome after: the floor of any client that sends
 * each order exactly once, lib/bare-client.mjs; odd runs htorder, bare, floor, even runs the
 * reverse).
 * Environment: BENCH_RUNS, BENCH_FIRST_RUNS, BENCH_JOBS, BENCH_FORMAT, BENCH_LATENCY_MS,
 * BENCH_CONCURRENCY, BENCH_BARE, BENCH_PROF, BENCH_CLI, BENCH_REPORTS_CLI.
 */
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoRunEnv, orderableAssets } from './lib/demo-account.mjs';
import { writeRunManifest } from './lib/run-manifest.mjs';
import { reportDifference } from './lib/same-reports.mjs';
import { startSandbox } from '../dist/sandbox/index.js';
import {
  endOfOptions,
  flag,
  load,
  measureProcess,
  median,
  megabytes,
  option,
  seconds,
  spread,
  times,
} from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(option('--runs', 'BENCH_RUNS', 5));
const FIRST_RUNS = Number(option('--first-runs', 'BENCH_FIRST_RUNS', RUNS));
const SIZES = String(option('--jobs', 'BENCH_JOBS', 1000))
  .split(',')
  .map((n) => Number(n.replace(/_/g, '')));
const FORMAT = option('--format', 'BENCH_FORMAT', 'csv');
const LATENCY = Number(option('--latency', 'BENCH_LATENCY_MS', 25));
const CONCURRENCY = Number(option('--concurrency', 'BENCH_CONCURRENCY', 8));
const BARE_CLIENT = option('--bare', 'BENCH_BARE', '1') !== '0';
const PROF = option('--prof', 'BENCH_PROF', undefined);
const HEAP_PROF = option('--heap-prof', 'BENCH_HEAP_PROF', undefined);
const TRACE = flag('--trace');
const CUSTOMERS = flag('--customers');
const MEMORY = flag('--memory');
const FLOOR = flag('--floor');
const LINES = 5;
// --cli: another build of htorder to measure (e.g. an older one, for before/after).
const CLI = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
const REPORTS_CLI = option('--reports-cli', 'BENCH_REPORTS_CLI', undefined);
endOfOptions();
const BARE = join(root, 'bench/lib/bare-client.mjs');
const RSS_GOAL = 512 * 1024 * 1024;
if (!['csv', 'yaml'].includes(FORMAT)) throw new Error(`--format ${FORMAT}: csv or yaml`);
if (SIZES.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error('--jobs: one or more positive numbers');

const sandbox = await startSandbox({ port: 0 });
const work = await mkdtemp(join(tmpdir(), 'htorder-bench-'));
const stats = join(work, 'stats.json');
try {
  const assets = await orderableAssets(sandbox, LINES);
  const account = sandbox.accounts.find((a) => a.name === 'us-demo');
  const region = sandbox.regions[account.region];
  const env = { ...demoRunEnv(sandbox, CONCURRENCY), HTORDER_STATE_DIR: join(work, 'state') };
  const bareEnv = {
    ...process.env,
    BARE_BASE_URL: region.baseUrl,
    BARE_TOKEN_URL: `${region.authUrl}/realms/${encodeURIComponent(region.realm)}/protocol/openid-connect/token`,
    BARE_CLIENT_ID: account.clientId,
    BARE_CLIENT_SECRET: account.clientSecret,
    BARE_CONCURRENCY: String(CONCURRENCY),
  };
  for (const jobs of SIZES) await benchSize(jobs, { assets, env, bareEnv });
} finally {
  await sandbox.close();
  await rm(work, { recursive: true, force: true });
}

/** One size: the warm-up, the vouched runs, the first runs, the reports' comparison. */
async function benchSize(JOBS, { assets, env, bareEnv }) {
  const fresh = async () => {
    await sandbox.admin.reset();
    await sandbox.admin.setFaults([{ route: '*', kind: 'latency', latencyMs: LATENCY }]);
  };
  const ext = FORMAT === 'csv' ? 'csv' : 'yaml';
  const htorder = async (tag, { nodeArgs = [], stateDir, jobs = JOBS, cli = CLI, dir = work, keep = false } = {}) => {
    const file = join(dir, `orders-${tag}.${ext}`);
    await writeRunManifest(file, { format: FORMAT, tag, jobs, lines: LINES, assets, customers: CUSTOMERS });
    await fresh();
    const runEnv = { ...env, ...(stateDir ? { HTORDER_STATE_DIR: stateDir } : {}) };
    const r = await measureProcess([cli, 'run', file], { statsFile: stats, env: traced(runEnv), cwd: work, nodeArgs });
    const calls = await sandbox.admin.calls();
    // A run that failed may have written no report: its exit code and output are what to show.
    const submitted = r.code === 0 ? (await summaryOf(file)).byStatus?.submitted : undefined;
    if (r.code !== 0 || calls['POST /Jobs'] !== 2 * jobs || submitted !== jobs)
      throw new Error(
        `htorder run exited ${r.code} with ${submitted} of ${jobs} jobs submitted, ${calls['POST /Jobs']} POST /Jobs:\n${r.stderr.slice(0, 2000)}`,
      );
    const reports = ['.result.json', '.result.csv', '.errors.txt'].map((s) => `${file}${s}`);
    for (const f of keep ? [file] : [file, ...reports]) await rm(f, { force: true });
    return { ...r, calls };
  };
  const profArgs = [
    ...(PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : []),
    ...(HEAP_PROF ? ['--heap-prof', `--heap-prof-dir=${HEAP_PROF}`] : []),
  ];

  // Warm-up: vouches the ledger, warms the simulator, gives the request bodies.
  const warm = await htorder(`W${JOBS}`, { jobs: BARE_CLIENT ? JOBS : 1 });
  const bodies = join(work, 'bodies.jsonl');
  if (BARE_CLIENT) await writeBodies(bodies);
  console.log(
    `htorder run${BARE_CLIENT ? ' vs a bare client' : ''}: ${JOBS.toLocaleString('en')} jobs × ${LINES} reorder lines (${FORMAT === 'csv' ? 'CSV template' : 'YAML, one delivery address in defaults'}), ${LATENCY} ms per call, concurrency ${CONCURRENCY}`,
  );
  console.log(`  warm-up (not timed): ${seconds(warm.wallMs)}`);

  const bare = async (tag, { floor = false } = {}) => {
    if (!BARE_CLIENT) return undefined;
    const bareFile = join(work, `bodies-${tag}.jsonl`);
    // Kept until the benchmark ends: files freed between runs make the next run's creates dearer
    // on some file systems (docs/performance.md, ext4's recently deleted inodes).
    const intents = join(work, `intents-${JOBS}-${tag}`);
    await renumber(bodies, bareFile, `W${JOBS}`, tag);
    await fresh();
    const runEnv = floor ? { ...bareEnv, BARE_INTENTS: intents } : bareEnv;
    const r = await measureProcess([BARE, bareFile], { statsFile: stats, env: traced(runEnv), cwd: work });
    await rm(bareFile);
    if (r.code !== 0) throw new Error(`bare client failed (${r.code}): ${r.stdout}${r.stderr.slice(0, 2000)}`);
    const sent = JSON.parse(r.stdout).sent;
    if (sent !== 2 * JOBS) throw new Error(`bare client sent ${sent} calls, expected ${2 * JOBS}`);
    return r;
  };
  const pair = async (run, tag, bareTag, opts) => {
    const floor = async () => (FLOOR ? bare(`F${bareTag}`, { floor: true }) : undefined);
    const h = run % 2 ? await htorder(tag, opts) : undefined;
    const f = run % 2 ? undefined : await floor();
    const b = await bare(bareTag);
    return { h: h ?? (await htorder(tag, opts)), b, f: f ?? (await floor()) };
  };
  // CPU a job: the whole process's (every thread), or its main thread's, which bounds a run whose
  // API answers faster than the thread can handle them.
  const cpuPerJob = (ms) => `${((ms / JOBS) * 1000).toFixed(0)} µs`;
  const versus = (h, b) =>
    b ? ` · bare client ${seconds(b.wallMs)} (CPU ${seconds(b.cpuMs)}) · ${times(h.wallMs / b.wallMs)}` : '';

  const ratios = [];
  const vouchedMs = [];
  const rss = [];
  const cpu = [];
  const mainCpu = [];
  const floorRatios = [];
  let calls;
  for (let run = 1; run <= RUNS; run++) {
    // Order numbers of their own in each size: the ledger stays from one size to the next.
    const { h, b, f } = await pair(run, `R${JOBS}x${run}`, `B${run}`, { nodeArgs: profArgs });
    calls = h.calls;
    const total = Object.values(calls).reduce((a, c) => a + c, 0);
    if (b) ratios.push(h.wallMs / b.wallMs);
    vouchedMs.push(h.wallMs);
    rss.push(h.maxRssBytes);
    cpu.push(h.cpuMs);
    mainCpu.push(h.mainThreadMs);
    console.log(
      `  run ${run} (${run % 2 ? 'htorder first' : 'bare first'}): htorder ${seconds(h.wallMs)} (CPU ${seconds(h.cpuMs)}, ${cpuPerJob(h.cpuMs)} per job, main thread ${cpuPerJob(h.mainThreadMs)}, peak RSS ${megabytes(h.maxRssBytes)}, ${total} calls)${versus(h, b)} · ${load()}`,
    );
    if (TRACE) console.log(`    htorder: ${phases(h)}${b ? ` · bare client: ${phases(b)}` : ''}`);
    if (f && b) {
      floorRatios.push(f.wallMs / b.wallMs);
      console.log(
        `    exactly-once floor ${seconds(f.wallMs)} (CPU ${seconds(f.cpuMs)}) · ${times(f.wallMs / b.wallMs)} the bare client; htorder ${times(h.wallMs / f.wallMs)} the floor${TRACE ? ` · ${phases(f)}` : ''}`,
      );
    }
    if (MEMORY) console.log(`    memory: ${memoryText(h.memory)}`);
  }
  if (RUNS > 0) {
    const total = Object.values(calls).reduce((a, c) => a + c, 0);
    const bound = (total * LATENCY) / CONCURRENCY;
    if (ratios.length > 0) console.log(`  ratio ${spread(ratios, times)}`);
    if (floorRatios.length > 0) console.log(`  the exactly-once floor ÷ the bare client ${spread(floorRatios, times)}`);
    console.log(
      `  CPU ${spread(cpu, seconds)}; main thread's ${spread(mainCpu, seconds)}; peak RSS ${spread(rss, megabytes)}`,
    );
    console.log(
      `  calls per endpoint (htorder, last run; ${(calls['POST /Jobs'] / JOBS).toFixed(3)} POST /Jobs per job):`,
    );
    for (const [k, v] of Object.entries(calls).sort((a, b) => b[1] - a[1]))
      console.log(`    ${String(v).padStart(8)}  ${k}`);
    console.log(`  API bound: ${seconds(bound)} (${total} calls × ${LATENCY} ms ÷ ${CONCURRENCY})`);
    const ok = ratios.filter((r) => r <= 1.05).length;
    if (ratios.length > 0) console.log(`  goal: run ≤ 1.05× the bare client … met in ${ok} of ${RUNS} runs`);
    const rssOk = rss.filter((r) => r <= RSS_GOAL).length;
    console.log(`  goal: peak RSS ≤ 512 MB … met in ${rssOk} of ${RUNS} runs`);
  }

  // First runs: a fresh state dir each time, whose ledger cannot vouch for the account (a new
  // machine, a container without its volume), on the sandbox's account of a few closed jobs.
  const firstRatios = [];
  const firstMs = [];
  const perJob = [];
  let firstCalls;
  for (let run = 1; run <= FIRST_RUNS; run++) {
    const stateDir = join(work, `state-F${run}`);
    const { h, b } = await pair(run, `F${JOBS}x${run}`, `C${run}`, { stateDir });
    await rm(stateDir, { recursive: true, force: true });
    firstCalls = h.calls;
    const total = Object.values(firstCalls).reduce((a, c) => a + c, 0);
    if (b) firstRatios.push(h.wallMs / b.wallMs);
    firstMs.push(h.wallMs);
    perJob.push(total / JOBS);
    console.log(
      `  first run ${run} (${run % 2 ? 'htorder first' : 'bare first'}): htorder ${seconds(h.wallMs)} (CPU ${seconds(h.cpuMs)}, peak RSS ${megabytes(h.maxRssBytes)}, ${total} calls, ${(total / JOBS).toFixed(3)} per job)${versus(h, b)} · ${load()}`,
    );
  }
  if (FIRST_RUNS > 0) {
    if (firstRatios.length > 0) console.log(`  first run: ratio ${spread(firstRatios, times)}`);
    console.log(`  first run: calls per job ${spread(perJob, (v) => v.toFixed(3))}`);
    // Both htorder, the same manifest size, minutes apart: what a first run costs over a vouched one.
    if (RUNS > 0)
      console.log(`  first run ÷ vouched run (medians of wall time): ${times(median(firstMs) / median(vouchedMs))}`);
    console.log('  calls per endpoint (first run, last run):');
    for (const [k, v] of Object.entries(firstCalls).sort((a, b) => b[1] - a[1]))
      console.log(`    ${String(v).padStart(8)}  ${k}`);
    const firstOk = perJob.filter((p, i) => p <= 2.02 && (firstRatios[i] ?? 0) <= 1.05).length;
    console.log(
      `  goal: a first run${BARE_CLIENT ? ' ≤ 1.05× the bare client and' : ''} ≤ 2.02 calls per job … met in ${firstOk} of ${FIRST_RUNS} runs`,
    );
  }

  if (REPORTS_CLI) {
    // The same input run by both builds, each in a folder of its own (the same base name, so
    // errors.txt's lines match), each with a fresh state dir.
    const dirs = [join(work, 'reports-this'), join(work, 'reports-other')];
    const [mine, theirs] = dirs.map((d) => join(d, `orders-K.${ext}`));
    for (const [i, cli] of [CLI, REPORTS_CLI].entries()) {
      await mkdir(dirs[i], { recursive: true });
      const stateDir = join(work, `state-K${i}`);
      await htorder('K', { stateDir, cli, dir: dirs[i], keep: true });
      await rm(stateDir, { recursive: true, force: true });
    }
    const difference = await reportDifference(mine, theirs);
    console.log(
      `  reports of this build and ${REPORTS_CLI} on the same input: ${difference === undefined ? 'the same (timestamps and job numbers aside)' : `DIFFERENT — ${difference}`}`,
    );
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    if (difference !== undefined) process.exitCode = 1;
  }
}

/** The warm-up's request bodies, one job a line, in the order the sandbox got them. */
async function writeBodies(file) {
  const created = await sandbox.admin.jobs();
  const out = await open(file, 'w');
  try {
    let text = '';
    for (const j of created) {
      const { validateOnly: _, ...candidate } = j.request;
      text += `${JSON.stringify(candidate)}\n`;
      if (text.length > 1 << 20) {
        await out.write(text);
        text = '';
      }
    }
    await out.write(text);
  } finally {
    await out.close();
  }
}

/** The bodies under other order numbers of the same length (the run's tag instead of the warm-up's). */
async function renumber(from, to, warmTag, tag) {
  const text = await readFile(from, 'utf8');
  const other = tag.padEnd(warmTag.length, '0').slice(0, warmTag.length);
  await writeFile(to, text.replaceAll(`"orderNumber":"${warmTag}-`, `"orderNumber":"${other}-`));
}

/** The summary of the input's result.json, read from its head (a big report is gigabytes). */
async function summaryOf(input) {
  const f = await open(`${input}.result.json`, 'r');
  try {
    const { buffer, bytesRead } = await f.read({ buffer: Buffer.alloc(64 * 1024), position: 0 });
    const head = buffer.subarray(0, bytesRead).toString('utf8');
    const at = head.indexOf('"summary": ');
    const end = head.indexOf('\n  },\n', at);
    return at < 0 || end < 0 ? {} : JSON.parse(head.slice(at + 11, end + 4));
  } finally {
    await f.close();
  }
}

/** With --trace, the child notes its first POST /Jobs and its last answer (lib/report-peak.mjs). */
function traced(env) {
  return {
    ...env,
    ...(TRACE ? { HTORDER_BENCH_TRACE: '1' } : {}),
    ...(MEMORY ? { HTORDER_BENCH_MEMORY: '1' } : {}),
  };
}

/** A traced run's phases: until the first POST /Jobs, the POSTs, from the last answer to exit (CPU split too). */
function phases(r) {
  if (!Number.isFinite(r.firstPostMs)) return 'no POST /Jobs traced';
  const ms = (v, digits = 0) => `${v.toFixed(digits)} ms`;
  // The simulator runs in this process: its CPU and the client's, over the machine's cores, is the
  // least wall time the pair could take on this machine however the two overlapped.
  const cores = availableParallelism();
  const floor = (r.cpuMs + r.hostCpuMs) / cores;
  const split = Number.isFinite(r.firstCreateMs)
    ? ` (dry runs ${seconds(r.firstCreateMs - r.firstPostMs)}, creates ${seconds(r.lastPostMs - r.firstCreateMs)})`
    : '';
  const calls =
    r.posts > 0
      ? `, a POST ${ms(r.postMs / r.posts, 2)} (median ${ms(r.postMedianMs, 2)}, 99th percentile ${ms(r.postP99Ms, 2)}) with ${(r.inFlightMs / (r.lastPostMs - r.firstPostMs)).toFixed(2)} in flight on average`
      : '';
  return `first POST /Jobs at ${ms(r.firstPostMs)}${calls}, POSTs ${seconds(r.lastPostMs - r.firstPostMs)}${split}, last answer to exit ${ms(r.exitMs - r.lastPostMs)}; CPU user ${seconds(r.userMs)} + system ${seconds(r.systemMs)}; the simulator's CPU ${seconds(r.hostCpuMs)}; both ÷ ${cores} cores ${seconds(floor)}`;
}

/** --memory: the peaks of process.memoryUsage(), and the RSS and heap after each tenth of the POSTs. */
function memoryText(memory) {
  if (!memory) return 'not sampled';
  const { peak, samples } = memory;
  const mb = (b) => megabytes(b).replace(' MB', '');
  const curve = [];
  for (let i = 1; i <= 10 && samples.length > 0; i++) {
    const s = samples[Math.min(samples.length - 1, Math.ceil((samples.length * i) / 10) - 1)];
    curve.push(`${s.posts / 2}:${mb(s.rss)}/${mb(s.heapUsed)}`);
  }
  return `peak rss ${megabytes(peak.rss)}, heap used ${megabytes(peak.heapUsed)} of ${megabytes(peak.heapTotal)}, external ${megabytes(peak.external)} (array buffers ${megabytes(peak.arrayBuffers)}); POSTs/2:rss/heap MB ${curve.join(' ')}`;
}
