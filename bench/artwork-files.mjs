#!/usr/bin/env node
/**
 * `npm run bench:artwork` — `htorder plan --sandbox` of a manifest whose every line names the
 * same large artwork file (a sparse file: reading it costs the read and the hash, not the disk).
 * Before each file was hashed once per run, every line read and hashed it again, on the event
 * loop; this prints the wall and CPU time of whole processes (start-up included), each run and
 * the spread, so a build without the memo (`--cli OTHER/dist/cli/main.js`) can be compared.
 *
 * Options: --runs N (default 3), --mb N (the file's size, default 500 MiB), --lines N (default
 * 200), --cli FILE. Environment: BENCH_RUNS, BENCH_ART_MB, BENCH_ART_LINES.
 * Nothing is uploaded (plan), and the store's endpoint is never called (a presigned link is made
 * locally).
 */
import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endOfOptions, load, measureProcess, megabytes, option, seconds, spread } from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(option('--runs', 'BENCH_RUNS', 3));
const mb = Number(option('--mb', 'BENCH_ART_MB', 500));
const lines = Number(option('--lines', 'BENCH_ART_LINES', 200));
const cli = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
endOfOptions();

const dir = await mkdtemp(join(tmpdir(), 'htorder-bench-artwork-'));
try {
  await mkdir(join(dir, 'designs'));
  const art = join(dir, 'designs', 'tiger.png');
  await writeFile(art, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  await truncate(art, mb * 1024 * 1024);
  const job = (i) => `  - orderNumber: ART-${i}
    deliveryAddress:
      deliveryMethod: UPSGND
      contactName: Ana Ruiz
      streetAddress: 1 Main St
      city: Austin
      state: TX
      postalCode: "78701"
      countryCodeISO2: US
    items:
      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerReference: tiger
        artwork: designs/tiger.png
        attributes: { Colors: 4 }
`;
  const file = join(dir, 'orders.yaml');
  await writeFile(file, `version: 1\njobs:\n${Array.from({ length: lines }, (_, i) => job(i + 1)).join('')}`);
  const env = {
    ...process.env,
    HTORDER_STATE_DIR: join(dir, 'state'),
    HTORDER_LOG_LEVEL: 'silent',
    HTORDER_ARTWORK_STORE: 's3://bench/art/',
    HTORDER_ARTWORK_CHECK: 'off',
    HTORDER_S3_ENDPOINT: 'http://127.0.0.1:9',
    HTORDER_S3_FORCE_PATH_STYLE: '1',
    HTORDER_DUPLICATE_WINDOW_DAYS: '0',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_REGION: 'us-east-1',
  };
  console.log(`plan --sandbox: ${lines} lines naming one ${mb} MiB artwork file; ${cli}; ${load()}`);
  const walls = [];
  const cpus = [];
  for (let r = 0; r < runs; r++) {
    await rm(join(dir, 'state'), { recursive: true, force: true });
    const m = await measureProcess([cli, 'plan', '--sandbox', file], {
      statsFile: join(dir, 'stats.json'),
      env,
      cwd: dir,
    });
    if (m.code !== 0) throw new Error(`plan exited ${m.code}: ${m.stderr.slice(-2000)}`);
    walls.push(m.wallMs);
    cpus.push(m.cpuMs);
    console.log(`  run ${r + 1}: ${seconds(m.wallMs)} wall, ${seconds(m.cpuMs)} CPU, peak ${megabytes(m.maxRssBytes)}`);
  }
  console.log(`wall ${spread(walls, seconds)}; CPU ${spread(cpus, seconds)}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
