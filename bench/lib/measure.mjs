/**
 * Whole-process measurements for the benchmarks: a child is timed from spawn to exit (start-up
 * included, as a user sees it), and its peak RSS and CPU time come from the kernel through the
 * preloaded report-peak.mjs. Plus the small statistics every benchmark prints: each run, then
 * the spread (min, median, max) — never only the best run.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const REPORT_PEAK = fileURLToPath(new URL('./report-peak.mjs', import.meta.url));

/**
 * Runs `node [nodeArgs] --import report-peak args` and resolves with its wall time (spawn →
 * exit), exit code, output, peak RSS and CPU time (the whole process, and its main thread alone).
 */
export async function measureProcess(args, { statsFile, env = process.env, cwd, nodeArgs = [] }) {
  await rm(statsFile, { force: true });
  await rm(`${statsFile}.worker`, { force: true });
  const started = performance.now();
  // This process's own CPU over the run: the simulator's, for a benchmark that runs it in-process.
  const ownCpu = process.cpuUsage();
  const child = spawn(process.execPath, [...nodeArgs, '--import', REPORT_PEAK, ...args], {
    cwd,
    env: { ...env, HTORDER_BENCH_STATS: statsFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  const wallMs = performance.now() - started;
  const own = process.cpuUsage(ownCpu);
  const hostCpuMs = (own.user + own.system) / 1000;
  let stats = {
    maxRssBytes: Number.NaN,
    userMs: Number.NaN,
    systemMs: Number.NaN,
    mainThreadMs: Number.NaN,
    mainThreadQueuedMs: Number.NaN,
  };
  try {
    stats = JSON.parse(await readFile(statsFile, 'utf8'));
  } catch {
    // The child died before its exit hook ran (a signal): the caller reports the exit code.
  }
  // A worker thread's CPU and wall time (report-peak.mjs), when the child started one.
  const worker = await readFile(`${statsFile}.worker`, 'utf8').then(JSON.parse, () => ({}));
  return { wallMs, code, stdout, stderr, hostCpuMs, ...stats, ...worker, cpuMs: stats.userMs + stats.systemMs };
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** "min–max, median m" of numbers, each formatted by `fmt`. */
export function spread(values, fmt) {
  return `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}, median ${fmt(median(values))}`;
}

/** The machine's load, printed with every measurement: timings on a busy machine measure the neighbours. */
export function load() {
  return `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
}

export const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
export const megabytes = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
export const times = (r) => `${r.toFixed(2)}×`;

/** The options this benchmark asked for (option, flag): what endOfOptions accepts. */
const asked = new Set();

/** Reads `--name value` (or `--name=value`) from argv, else the environment variable, else the fallback. */
export function option(name, envName, fallback) {
  asked.add(name);
  for (const [i, arg] of process.argv.entries()) {
    if (arg === name) return process.argv[i + 1];
    if (arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
  }
  return process.env[envName] ?? fallback;
}

/** Whether argv holds the switch `--name`. */
export function flag(name) {
  asked.add(name);
  return process.argv.includes(name);
}

/**
 * Stops the benchmark (exit 2) when argv holds an option none of its option() and flag() calls
 * asked for, naming those it takes: a mistyped or unknown one (`--help`, `--job 10000`) would
 * otherwise run the default benchmark and print figures of another size. Called once they are read.
 */
export function endOfOptions() {
  const unknown = process.argv.slice(2).filter((a) => a.startsWith('--') && !asked.has(a.split('=')[0]));
  if (unknown.length === 0) return;
  const takes = [...asked].sort().join(', ');
  process.stderr.write(`${unknown.join(', ')}: not an option of this benchmark; it takes ${takes} (bench/README.md)\n`);
  process.exit(2);
}
