// `node bench/report-strays.mjs` (after `npm run build`): what looking for an input's stray
// report temporaries costs each report write, in a folder of BENCH_ENTRIES (1000,10000,100000)
// other files — a watcher's done/ keeps every input it finished. Two ways: a fresh listing at
// every write, and the listing remembered for the hour (TemporaryListings, what writes use).
// Each is run BENCH_RUNS (21) times; prints the spread and the load average. Folders under
// BENCH_DIR (default the OS temp folder), removed afterwards.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, spread } from './lib/measure.mjs';
import { removeStraysOf, TemporaryListings } from '../dist/storage/stray-temporaries.js';

const SIZES = (process.env.BENCH_ENTRIES ?? '1000,10000,100000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const root = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'htorder-bench-strays-'));

async function timed(act) {
  const started = performance.now();
  await act();
  return performance.now() - started;
}

try {
  console.log(`stray report temporaries, cost per write (node ${process.version}, ${RUNS} runs, ${load()})`);
  for (const size of SIZES) {
    const dir = join(root, String(size));
    await mkdir(dir);
    for (let i = 0; i < size; i += 1000)
      await Promise.all(
        Array.from({ length: Math.min(1000, size - i) }, (_, j) => writeFile(join(dir, `${i + j}.csv`), '')),
      );
    const reports = ['result.json', 'result.csv', 'errors.txt'].map((r) => join(dir, `0.csv.${r}`));
    const listings = new TemporaryListings();
    await removeStraysOf(reports, undefined, listings);
    const fresh = [];
    const remembered = [];
    for (let run = 0; run < RUNS; run++) {
      fresh.push(await timed(() => removeStraysOf(reports, undefined, new TemporaryListings())));
      remembered.push(await timed(() => removeStraysOf(reports, undefined, listings)));
    }
    const ms = (xs) => spread(xs, (x) => `${x.toFixed(3)} ms`);
    console.log(`  ${size} entries: listed at every write ${ms(fresh)}; remembered ${ms(remembered)}`);
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
