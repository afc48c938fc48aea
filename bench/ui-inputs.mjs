// `npm run bench:ui`: how long the dashboard's inputs page takes for a large folder.
//
// A drop folder of BENCH_INPUTS (60,000) inputs, as a folder the dashboard caps at 20,000
// entries each: a third waiting at the top (bare inputs), a third in done/ and a third in
// failed/ as reports without their inputs (each report one job, `submitted` or `invalid`).
// The real CLI (`dist/cli/main.js ui DIR`) in a child process; the page `/` is asked for
// BENCH_LOADS (10) times one after another, each on a new connection with the token, after one
// first load (which reads the newest 5,000 reports); then BENCH_LOADS times more, each after a
// new file was dropped at the top (as under a watcher: the folder changed). Prints the first
// load, then every load's time and size and the spreads. A load is what a browser's reload or
// the page's live update costs. BENCH_PROF=1 writes --cpu-prof files to /tmp/benchprof. --cli FILE (BENCH_CLI):
// another build's dist/cli/main.js, for before/after.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endOfOptions, load, option, spread } from './lib/measure.mjs';

const INPUTS = Number(process.env.BENCH_INPUTS ?? 60_000);
const LOADS = Number(process.env.BENCH_LOADS ?? 10);
const DIR = process.env.BENCH_DIR ?? tmpdir();
const PROF = process.env.BENCH_PROF === '1';
const CLI = option('--cli', 'BENCH_CLI', new URL('../dist/cli/main.js', import.meta.url).pathname);
endOfOptions();

const root = await mkdtemp(join(DIR, 'htorder-bench-ui-'));
let ui;
try {
  await makeFolder(root, INPUTS);
  ui = spawn(process.execPath, [...(PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/benchprof'] : []), CLI, 'ui', root], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const link = await new Promise((resolve, reject) => {
    let out = '';
    ui.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    ui.on('exit', (code) => reject(new Error(`htorder ui ended with ${code}`)));
  });
  const token = new URL(link).searchParams.get('token');
  const page = new URL('/', link);
  console.log(`${INPUTS} inputs in ${root}; ${load()}`);
  const first = await get(page, token);
  console.log(`first load: ${first.ms.toFixed(0)} ms, ${(first.bytes / 1024).toFixed(0)} KiB (status ${first.status})`);
  const ms = [];
  for (let i = 0; i < LOADS; i++) {
    const r = await get(page, token);
    ms.push(r.ms);
    console.log(`load ${i + 1}: ${r.ms.toFixed(0)} ms, ${(r.bytes / 1024).toFixed(0)} KiB (status ${r.status})`);
  }
  console.log(`loads: ${spread(ms, (n) => `${n.toFixed(0)} ms`)}; ${load()}`);
  // As under a watcher: a file has come since the last load (the drop folder's time moved).
  const busy = [];
  for (let i = 0; i < LOADS; i++) {
    await writeFile(join(root, `new-${i}.yaml`), 'version: 1\njobs: []\n');
    const r = await get(page, token);
    busy.push(r.ms);
    console.log(`load ${i + 1} after a new file: ${r.ms.toFixed(0)} ms (status ${r.status})`);
  }
  console.log(`loads after a new file: ${spread(busy, (n) => `${n.toFixed(0)} ms`)}; ${load()}`);
} finally {
  if (ui && ui.exitCode === null) {
    ui.kill('SIGTERM');
    await new Promise((resolve) => ui.on('close', resolve));
  }
  await rm(root, { recursive: true, force: true });
}

/** One GET on its own connection, timed until the last byte. */
function get(url, token) {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let bytes = 0;
      res.on('data', (d) => {
        bytes += d.length;
      });
      res.on('end', () => resolve({ ms: performance.now() - started, bytes, status: res.statusCode }));
    });
    // A load the server gave up on (its request timeout) is a result, not the end of the run.
    req.on('error', (err) => resolve({ ms: performance.now() - started, bytes: 0, status: err.code ?? err.message }));
    req.end();
  });
}

async function makeFolder(dir, n) {
  const third = Math.ceil(n / 3);
  for (const sub of ['done', 'failed']) await mkdir(join(dir, sub));
  const day = Date.parse('2026-11-01T06:00:00Z');
  const report = (i, status) =>
    JSON.stringify({
      reportVersion: 1,
      command: 'watch',
      input: { file: `in-${i}.yaml`, format: 'yaml' },
      startedAt: new Date(day + i * 60_000).toISOString(),
      finishedAt: new Date(day + i * 60_000 + 800).toISOString(),
      summary: { jobs: 1, items: 1, errors: status === 'invalid' ? 1 : 0, warnings: 0 },
      errors: [],
      warnings: [],
      jobs: [
        {
          index: 0,
          orderNumber: `PO-${i}`,
          status,
          jobNumber: status === 'submitted' ? 700_000 + i : null,
          totalJobCost: status === 'submitted' ? 12.5 : null,
          estimatedCost: 12.5,
          currency: 'USD',
          errors:
            status === 'invalid' ? [{ code: 'x', message: 'quantity: must be at least 1', source: { line: 7 } }] : [],
          items: [{ index: 0, itemType: 'Asset', code: 'A10001', quantity: 50, status }],
        },
      ],
    });
  const writes = [];
  for (let i = 0; i < n; i++) {
    const which = i % 3;
    const path =
      which === 0 ? join(dir, `in-${i}.yaml`) : join(dir, which === 1 ? 'done' : 'failed', `in-${i}.yaml.result.json`);
    writes.push(
      writeFile(path, which === 0 ? 'version: 1\njobs: []\n' : report(i, which === 1 ? 'submitted' : 'invalid')),
    );
    if (writes.length >= 256) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  return third;
}
