#!/usr/bin/env node
/**
 * `npm run bench` — `htorder run` against a bare client on the same simulator, in the same run.
 *
 * A YAML manifest of --jobs jobs (default 1,000) × 5 reorder lines (Asset items), one delivery
 * address (in `defaults`), run by the real CLI entry (`node dist/cli/main.js run FILE`) with
 * HTORDER_CONCURRENCY=--concurrency (8) against the sandbox with --latency ms (25) added to
 * every call. Beside it, a bare client in its own process (lib/bare-client.mjs) sends only the
 * same POST /Jobs calls — each job's dry run and create, bodies prebuilt, undici `request`, the
 * same concurrency. Both are timed as whole processes (spawn → exit), alternating (odd runs
 * htorder first, even runs the bare client first), the sandbox reset before each, so each
 * sees the same simulator. Prints every run's ratio, the spread (min–max, median), the calls
 * per endpoint, the API bound (calls × latency ÷ concurrency), and the goal: run ≤ 1.05× the
 * bare client.
 *
 * A warm-up run first (not timed) vouches the ledger for the account — as on every run but a
 * first one, new orders need no search before they are sent — warms the simulator, and yields
 * the exact request bodies the bare client sends (with other order numbers).
 *
 * Then as many first runs: each with a fresh state dir, whose ledger cannot vouch for the
 * account, so every order is checked on the account before it is sent (one listing of the
 * account's few jobs), against the bare client again; the calls per job and the ratio, with the
 * goal: ≤ 1.05× the bare client and ≤ 2.02 calls per job.
 *
 * Options: --runs N (5), --jobs N (1000), --latency MS (25), --concurrency N (8), --prof DIR
 * (a --cpu-prof profile of each htorder run into DIR), --cli FILE (another build's
 * dist/cli/main.js, for before/after), --trace (each run's phases for both processes: the first
 * POST /Jobs, the POSTs, the time from the last answer to exit; lib/report-peak.mjs).
 * Environment: BENCH_RUNS, BENCH_JOBS, BENCH_LATENCY_MS, BENCH_CONCURRENCY, BENCH_PROF.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { orderableAssets, sandboxEnv } from './lib/demo-account.mjs';
import { startSandbox } from '../dist/sandbox/index.js';
import { load, measureProcess, median, megabytes, option, seconds, spread, times } from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(option('--runs', 'BENCH_RUNS', 5));
const JOBS = Number(option('--jobs', 'BENCH_JOBS', 1000));
const LATENCY = Number(option('--latency', 'BENCH_LATENCY_MS', 25));
const CONCURRENCY = Number(option('--concurrency', 'BENCH_CONCURRENCY', 8));
const PROF = option('--prof', 'BENCH_PROF', undefined);
const TRACE = process.argv.includes('--trace');
const LINES = 5;
// --cli: another build of htorder to measure (e.g. an older one, for before/after).
const CLI = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
const BARE = join(root, 'bench/lib/bare-client.mjs');

const sandbox = await startSandbox({ port: 0 });
const work = await mkdtemp(join(tmpdir(), 'htorder-bench-'));
const stats = join(work, 'stats.json');
try {
  const assets = await orderableAssets(sandbox, LINES);
  const account = sandbox.accounts.find((a) => a.name === 'us-demo');
  const region = sandbox.regions[account.region];
  const env = {
    ...process.env,
    ...sandboxEnv(sandbox, 'us-demo'),
    HTORDER_STATE_DIR: join(work, 'state'),
    HTORDER_CONCURRENCY: String(CONCURRENCY),
    HTORDER_LOG_LEVEL: 'silent',
  };
  const bareEnv = {
    ...process.env,
    BARE_BASE_URL: region.baseUrl,
    BARE_TOKEN_URL: `${region.authUrl}/realms/${encodeURIComponent(region.realm)}/protocol/openid-connect/token`,
    BARE_CLIENT_ID: account.clientId,
    BARE_CLIENT_SECRET: account.clientSecret,
    BARE_CONCURRENCY: String(CONCURRENCY),
  };
  const fresh = async () => {
    await sandbox.admin.reset();
    await sandbox.admin.setFaults([{ route: '*', kind: 'latency', latencyMs: LATENCY }]);
  };
  const htorder = async (tag, nodeArgs = [], stateDir = undefined) => {
    const file = join(work, `orders-${tag}.yaml`);
    await writeFile(file, manifest(tag, assets));
    await fresh();
    const runEnv = stateDir ? { ...env, HTORDER_STATE_DIR: stateDir } : env;
    const r = await measureProcess([CLI, 'run', file], { statsFile: stats, env: traced(runEnv), cwd: work, nodeArgs });
    const created = await sandbox.admin.jobs();
    if (r.code !== 0 || created.length !== JOBS)
      throw new Error(
        `htorder run exited ${r.code} with ${created.length} of ${JOBS} jobs created:\n${r.stderr.slice(0, 2000)}`,
      );
    return { ...r, calls: await sandbox.admin.calls(), created };
  };

  // Warm-up: vouches the ledger, warms the simulator, gives the request bodies.
  const warm = await htorder('W0');
  const bodies = warm.created.map((j) => {
    const { validateOnly: _, ...candidate } = j.request;
    return candidate;
  });
  console.log(
    `htorder run vs a bare client: ${JOBS.toLocaleString('en')} jobs × ${LINES} reorder lines (YAML, one delivery address), ${LATENCY} ms per call, concurrency ${CONCURRENCY}`,
  );
  console.log(`  warm-up (not timed): ${seconds(warm.wallMs)}`);

  const bare = async (tag, bareLetter, run) => {
    const bareFile = join(work, `bodies-${tag}.json`);
    // The same bodies under other order numbers of the same length (B or C instead of W).
    await writeFile(
      bareFile,
      JSON.stringify(bodies.map((b) => ({ ...b, orderNumber: b.orderNumber.replace(/^W0/, `${bareLetter}${run}`) }))),
    );
    await fresh();
    const r = await measureProcess([BARE, bareFile], { statsFile: stats, env: traced(bareEnv), cwd: work });
    if (r.code !== 0) throw new Error(`bare client failed (${r.code}): ${r.stdout}${r.stderr.slice(0, 2000)}`);
    const sent = JSON.parse(r.stdout).sent;
    if (sent !== 2 * JOBS) throw new Error(`bare client sent ${sent} calls, expected ${2 * JOBS}`);
    return r;
  };

  const ratios = [];
  const vouchedMs = [];
  let calls;
  for (let run = 1; run <= RUNS; run++) {
    const tag = `R${run}`;
    const profArgs = PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [];
    const h = run % 2 ? await htorder(tag, profArgs) : undefined;
    const b = await bare(tag, 'B', run);
    const h2 = h ?? (await htorder(tag, profArgs));
    calls = h2.calls;
    const total = Object.values(calls).reduce((a, c) => a + c, 0);
    const ratio = h2.wallMs / b.wallMs;
    ratios.push(ratio);
    vouchedMs.push(h2.wallMs);
    console.log(
      `  run ${run} (${run % 2 ? 'htorder first' : 'bare first'}): htorder ${seconds(h2.wallMs)} (CPU ${seconds(h2.cpuMs)}, peak RSS ${megabytes(h2.maxRssBytes)}, ${total} calls) · bare client ${seconds(b.wallMs)} (CPU ${seconds(b.cpuMs)}) · ${times(ratio)} · ${load()}`,
    );
    if (TRACE) console.log(`    htorder: ${phases(h2)} · bare client: ${phases(b)}`);
  }
  const total = Object.values(calls).reduce((a, c) => a + c, 0);
  const bound = (total * LATENCY) / CONCURRENCY;
  const ok = ratios.filter((r) => r <= 1.05).length;
  console.log(`  ratio ${spread(ratios, times)}`);
  console.log(
    `  calls per endpoint (htorder, last run; ${(calls['POST /Jobs'] / JOBS).toFixed(3)} POST /Jobs per job):`,
  );
  for (const [k, v] of Object.entries(calls).sort((a, b) => b[1] - a[1]))
    console.log(`    ${String(v).padStart(6)}  ${k}`);
  console.log(`  API bound: ${seconds(bound)} (${total} calls × ${LATENCY} ms ÷ ${CONCURRENCY})`);
  console.log(`  goal: run ≤ 1.05× the bare client … met in ${ok} of ${RUNS} runs`);

  // First runs: a fresh state dir each time, whose ledger cannot vouch for the account (a new
  // machine, a container without its volume), on the sandbox's account of a few closed jobs.
  const firstRatios = [];
  const firstMs = [];
  const perJob = [];
  let firstCalls;
  for (let run = 1; run <= RUNS; run++) {
    const tag = `F${run}`;
    const stateDir = join(work, `state-${tag}`);
    const h = run % 2 ? await htorder(tag, [], stateDir) : undefined;
    const b = await bare(tag, 'C', run);
    const h2 = h ?? (await htorder(tag, [], stateDir));
    firstCalls = h2.calls;
    const total = Object.values(firstCalls).reduce((a, c) => a + c, 0);
    const ratio = h2.wallMs / b.wallMs;
    firstRatios.push(ratio);
    firstMs.push(h2.wallMs);
    perJob.push(total / JOBS);
    console.log(
      `  first run ${run} (${run % 2 ? 'htorder first' : 'bare first'}): htorder ${seconds(h2.wallMs)} (${total} calls, ${(total / JOBS).toFixed(3)} per job) · bare client ${seconds(b.wallMs)} · ${times(ratio)} · ${load()}`,
    );
  }
  console.log(`  first run: ratio ${spread(firstRatios, times)}; calls per job ${spread(perJob, (v) => v.toFixed(3))}`);
  // Both htorder, the same manifest size, minutes apart: what a first run costs over a vouched one.
  console.log(`  first run ÷ vouched run (medians of wall time): ${times(median(firstMs) / median(vouchedMs))}`);
  console.log('  calls per endpoint (first run, last run):');
  for (const [k, v] of Object.entries(firstCalls).sort((a, b) => b[1] - a[1]))
    console.log(`    ${String(v).padStart(6)}  ${k}`);
  const firstOk = firstRatios.filter((r, i) => r <= 1.05 && perJob[i] <= 2.02).length;
  console.log(
    `  goal: a first run ≤ 1.05× the bare client and ≤ 2.02 calls per job … met in ${firstOk} of ${RUNS} runs`,
  );
} finally {
  await sandbox.close();
  await rm(work, { recursive: true, force: true });
}

/** With --trace, the child notes its first POST /Jobs and its last answer (lib/report-peak.mjs). */
function traced(env) {
  return TRACE ? { ...env, HTORDER_BENCH_TRACE: '1' } : env;
}

/** A traced run's phases: until the first POST /Jobs, the POSTs, from the last answer to exit (CPU split too). */
function phases(r) {
  if (!Number.isFinite(r.firstPostMs)) return 'no POST /Jobs traced';
  const ms = (v) => `${v.toFixed(0)} ms`;
  return `first POST /Jobs at ${ms(r.firstPostMs)}, POSTs ${seconds(r.lastPostMs - r.firstPostMs)}, last answer to exit ${ms(r.exitMs - r.lastPostMs)}; CPU user ${seconds(r.userMs)} + system ${seconds(r.systemMs)}`;
}

/** JOBS jobs of LINES asset reorders each; the one delivery address in `defaults`. */
function manifest(tag, assets) {
  const out = [
    'version: 1',
    'defaults:',
    '  deliveryAddress:',
    '    deliveryMethod: UPS Ground',
    '    contactName: Ana Ruiz',
    '    streetAddress: 1 Main St',
    '    city: Austin',
    '    state: Texas',
    '    postalCode: "78701"',
    '    country: United States',
    'jobs:',
  ];
  for (let j = 1; j <= JOBS; j++) {
    out.push(
      `  - orderNumber: ${tag}-${String(j).padStart(6, '0')}`,
      `    description: Bench reorder ${j}`,
      '    items:',
    );
    for (let k = 0; k < LINES; k++)
      out.push(
        `      - { itemType: Asset, code: ${assets[(j + k) % assets.length]}, quantity: ${50 + ((j + k) % 5) * 10} }`,
      );
  }
  return `${out.join('\n')}\n`;
}
