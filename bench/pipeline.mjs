// `npm run bench`: the pipeline's throughput against the sandbox (issue 5).
//
// 2,000 jobs × 5 items from a default-template CSV, `htorder run` against the sandbox with
// 25 ms added to every call, concurrency 8. htorder runs in a child process (the real CLI
// entry) so its CPU time and peak RSS are its own, not the sandbox's. Prints wall time,
// calls per endpoint, calls per job, CPU time, peak RSS, and the ratio of wall time to the
// lower bound (total calls × 25 ms / 8).
//
// Goals: <= 2 calls per job plus one call per distinct lookup value; wall <= 1.25 × bound.
// Options (env): BENCH_JOBS (2000), BENCH_LATENCY_MS (25), BENCH_CONCURRENCY (8).

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiClient } from '../dist/api/client.js';
import { sandboxConfig } from '../dist/config/sandbox-config.js';
import { startSandbox } from '../dist/sandbox/index.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 2000);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 25);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

const sandbox = await startSandbox({ port: 0 });
const work = await mkdtemp(join(tmpdir(), 'htorder-bench-'));
try {
  const assets = await orderableAssets(20);
  const file = join(work, 'orders.csv');
  await writeFile(file, csv(JOBS, assets));

  await sandbox.admin.setFaults([{ route: '*', kind: 'latency', latencyMs: LATENCY }]);
  await sandbox.admin.resetCalls();
  const account = sandbox.accounts.find((a) => a.name === 'us-demo');
  const region = sandbox.regions[account.region];
  const env = {
    ...process.env,
    HTORDER_BASE_URL: region.baseUrl,
    HTORDER_AUTH_URL: region.authUrl,
    HTORDER_REALM: region.realm,
    HTORDER_CLIENT_ID: account.clientId,
    HTORDER_CLIENT_SECRET: account.clientSecret,
    HTORDER_STATE_DIR: join(work, 'state'),
    HTORDER_CONCURRENCY: String(CONCURRENCY),
    HTORDER_LOG_LEVEL: 'silent',
    // As the CLI entry (dist/cli/main.js) sets it; the runner below imports the program directly.
    UV_THREADPOOL_SIZE: '16',
  };
  const usage = join(work, 'usage.json');
  // The child runs the CLI in-process and records its own resource usage when done.
  const runner = `
    import { writeFileSync } from 'node:fs';
    const { runCli } = await import(${JSON.stringify(new URL('../dist/cli/program.js', import.meta.url).href)});
    const code = await runCli(['run', ${JSON.stringify(file)}]);
    writeFileSync(${JSON.stringify(usage)}, JSON.stringify({ code, usage: process.resourceUsage() }));`;
  const started = performance.now();
  const sandboxCpu = process.cpuUsage();
  const exitCode = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/benchprof'] : []),
        '--input-type=module',
        '-e',
        runner,
      ],
      { env, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child.on('exit', resolve);
  });
  const wallMs = performance.now() - started;
  const sandboxUsed = process.cpuUsage(sandboxCpu);
  const { code, usage: ru } = JSON.parse(await readFile(usage, 'utf8'));
  const calls = await sandbox.admin.calls();
  const created = (await sandbox.admin.jobs()).length;

  // The floor on this machine: the same request bodies, sent by a bare client in a child
  // process at the same concurrency (no pipeline, ledger or reports), twice each as
  // validateOnly (the simulator does the same work for a dry run as for a create).
  const floorMs = await bareClientFloor(
    (await sandbox.admin.jobs()).map((j) => j.request),
    env,
  );

  const total = Object.values(calls).reduce((a, b) => a + b, 0);
  const jobCalls = calls['POST /Jobs'] ?? 0;
  const lookupCalls = total - jobCalls;
  const bound = (total * LATENCY) / CONCURRENCY;
  const distinct =
    1 /* token */ +
    1 /* account */ +
    1 /* countries */ +
    1 /* states */ +
    1 /* delivery options */ +
    2 /* price codes */ +
    assets.length +
    1 /* stock GD5000 */ +
    2; /* ship-date sets */

  const rows = [
    ['jobs × items', `${JOBS} × 5 (${JOBS * 5} CSV rows)`],
    ['exit code', `${code} (process ${exitCode}), jobs created ${created}`],
    ['wall time', `${(wallMs / 1000).toFixed(2)} s`],
    ['lower bound', `${(bound / 1000).toFixed(2)} s (${total} calls × ${LATENCY} ms / ${CONCURRENCY})`],
    ['wall / bound', `${(wallMs / bound).toFixed(3)} (goal <= 1.25)`],
    [
      'bare-client floor',
      `${(floorMs / 1000).toFixed(2)} s for the same ${JOBS * 2} POSTs (${(floorMs / bound).toFixed(3)} × bound): the simulator's and client's own per-call time`,
    ],
    [
      'wall / floor',
      `${(wallMs / floorMs).toFixed(3)} (what the pipeline adds: checks, lookups, ledger, reports, start-up)`,
    ],
    [
      'calls per job',
      `${(jobCalls / JOBS).toFixed(3)} POST /Jobs per job (goal <= 2) + ${lookupCalls} other calls (distinct lookup values ≈ ${distinct})`,
    ],
    [
      'CPU time',
      `${((ru.userCPUTime + ru.systemCPUTime) / 1e6).toFixed(2)} s (user ${(ru.userCPUTime / 1e6).toFixed(2)}, system ${(ru.systemCPUTime / 1e6).toFixed(2)})`,
    ],
    ['peak RSS', `${(ru.maxRSS / 1024).toFixed(0)} MB`],
    [
      'sandbox CPU',
      `${((sandboxUsed.user + sandboxUsed.system) / 1e6).toFixed(2)} s (the simulator, in this process; shares the machine's cores)`,
    ],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  console.log('\nhtorder run benchmark');
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
  console.log('\n  calls per endpoint:');
  for (const [k, v] of Object.entries(calls).sort((a, b) => b[1] - a[1]))
    console.log(`    ${String(v).padStart(6)}  ${k}`);
  if (code !== 0 || created !== JOBS) process.exitCode = 1;
} finally {
  await sandbox.close();
  await rm(work, { recursive: true, force: true });
}

/** Wall time of a bare client sending every body twice with validateOnly, CONCURRENCY at once. */
async function bareClientFloor(bodies, env) {
  const input = join(work, 'bodies.json');
  await writeFile(input, JSON.stringify(bodies));
  const out = join(work, 'floor.json');
  const code = `
    import { readFileSync, writeFileSync } from 'node:fs';
    import pLimit from 'p-limit';
    const { createApiClient } = await import(${JSON.stringify(new URL('../dist/api/client.js', import.meta.url).href)});
    const { resolveConfig } = await import(${JSON.stringify(new URL('../dist/config/resolve-config.js', import.meta.url).href)});
    const client = createApiClient(resolveConfig({ env: process.env, flags: {}, cwd: process.cwd() }));
    const bodies = JSON.parse(readFileSync(${JSON.stringify(input)}, 'utf8'));
    await client.lookups.countries();
    const limit = pLimit(${CONCURRENCY});
    const t = performance.now();
    await Promise.all([...bodies, ...bodies].map((b) => limit(() => client.jobs.validate(b))));
    writeFileSync(${JSON.stringify(out)}, String(performance.now() - t));
    await client.close();`;
  await new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env,
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('exit', resolve);
  });
  return Number(await readFile(out, 'utf8'));
}

/** Tags of orderable (non-archived, priced) assets of the demo account. */
async function orderableAssets(n) {
  const client = createApiClient(sandboxConfig(sandbox, 'us-demo', { stateDir: tmpdir() }));
  const tags = [];
  for await (const a of client.assets.iterate({ isArchived: false, priceCodeContains: 'DTF', pageSize: 100 })) {
    if (a.assetTag && a.priceCode && (a.priceBands?.[0]?.from ?? 1) <= 50) tags.push(a.assetTag);
    if (tags.length === n) break;
  }
  await client.close();
  return tags;
}

/** 5 rows per job: a new print, two asset reorders, two stock lines; a few distinct addresses. */
function csv(jobs, assets) {
  const header =
    'orderNumber,description,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity,customerReference,attr:Colors,variantCode,sizeQuantities';
  const addresses = [
    ['UPS Ground', 'Ana Ruiz', '1 Main St', 'Austin', 'Texas', '78701', 'United States'],
    ['UPSGND', 'Sam Lee', '200 Congress Ave', 'Dallas', 'TX', '75201', 'US'],
  ];
  const codes = ['DTF Full Color 10" x 10"', 'DTF Full Color 4" x 4"'];
  const q = (s) => `"${s.replace(/"/g, '""')}"`;
  const lines = [header];
  for (let j = 0; j < jobs; j++) {
    const a = addresses[j % addresses.length];
    const order = `BENCH-${String(j + 1).padStart(5, '0')}`;
    const job = [order, `Bench job ${j + 1}`, ...a];
    const blank = job.map((_, i) => (i === 0 ? order : ''));
    lines.push([...job, 'PriceCode', q(codes[j % 2]), 50, `logo-${j}`, 4, '', ''].join(','));
    lines.push([...blank, 'Asset', assets[j % assets.length], 50, '', '', '', ''].join(','));
    lines.push([...blank, 'Asset', assets[(j + 7) % assets.length], 50, '', '', '', ''].join(','));
    lines.push([...blank, 'Stock', 'GD5000', '', '', '', 'GD5000-BLK', 'S=10;M=20'].join(','));
    lines.push([...blank, 'Stock', 'GD5000', '', '', '', 'GD5000-WHT', 'L=5;XL=5'].join(','));
  }
  return `${lines.join('\n')}\n`;
}
