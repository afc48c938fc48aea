#!/usr/bin/env node
/**
 * `npm run bench:xlsx` — `htorder check` of a big default-template workbook
 * (lib/generate-xlsx.mjs: the CSV benchmark's columns and orders, saved as a spreadsheet
 * program saves them), timed as a whole process from spawn to exit (start-up included), with
 * its CPU time and peak RSS. With --cli-before FILE (another build's dist/cli/main.js), the
 * two builds are measured side by side and alternating (odd runs this build first), so a busy
 * neighbour slows both; the ratio is this build over the other, on wall and on CPU time.
 *
 * Options: --rows N (default 100,000), --runs N (default 5), --cli FILE (the build measured;
 * default this checkout's), --cli-before FILE, --keep (leave the workbook in place).
 * Environment: BENCH_XLSX_ROWS, BENCH_RUNS, BENCH_CLI, BENCH_CLI_BEFORE.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateXlsx } from './lib/generate-xlsx.mjs';
import { endOfOptions, flag, load, measureProcess, megabytes, option, seconds, spread, times } from './lib/measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const rows = Number(option('--rows', 'BENCH_XLSX_ROWS', 100_000));
const runs = Number(option('--runs', 'BENCH_RUNS', 5));
const CLI = option('--cli', 'BENCH_CLI', join(root, 'dist/cli/main.js'));
const BEFORE = option('--cli-before', 'BENCH_CLI_BEFORE', undefined);
const keep = flag('--keep');
endOfOptions();
const MB = 1024 * 1024;

const dir = await mkdtemp(join(tmpdir(), 'htorder-bench-xlsx-'));
const stats = join(dir, 'stats.json');
try {
  const file = join(dir, `orders-${rows}.xlsx`);
  const gen = await generateXlsx(file, rows);
  const size = (await stat(file)).size;
  console.log(
    `\nhtorder check of a workbook: ${gen.rows.toLocaleString('en')} rows, ${gen.jobs.toLocaleString('en')} orders, ${(size / MB).toFixed(1)} MB (${file})`,
  );
  const check = async (cli) => {
    const m = await measureProcess([cli, 'check', file], { statsFile: stats, cwd: root });
    if (m.code !== 0)
      throw new Error(`check (${cli}) exited ${m.code} (a valid file: expected 0):\n${m.stderr.slice(0, 2000)}`);
    return m;
  };
  const measured = { now: [], before: [], wall: [], cpu: [] };
  for (let run = 1; run <= runs; run++) {
    const first = run % 2 || BEFORE === undefined ? await check(CLI) : undefined;
    const b = BEFORE === undefined ? undefined : await check(BEFORE);
    const c = first ?? (await check(CLI));
    measured.now.push(c);
    const line = `check ${seconds(c.wallMs)} (CPU ${seconds(c.cpuMs)}, peak RSS ${megabytes(c.maxRssBytes)})`;
    if (b === undefined) {
      console.log(`  run ${run}: ${line} · ${load()}`);
      continue;
    }
    measured.before.push(b);
    measured.wall.push(c.wallMs / b.wallMs);
    measured.cpu.push(c.cpuMs / b.cpuMs);
    console.log(
      `  run ${run} (${run % 2 ? 'this build first' : 'before first'}): ${line} · before ${seconds(b.wallMs)} (CPU ${seconds(b.cpuMs)}, ${megabytes(b.maxRssBytes)}) · ${times(c.wallMs / b.wallMs)} · ${load()}`,
    );
  }
  const of = (list, key) => list.map((m) => m[key]);
  console.log(
    `  this build: wall ${spread(of(measured.now, 'wallMs'), seconds)}; CPU ${spread(of(measured.now, 'cpuMs'), seconds)}; peak RSS ${spread(of(measured.now, 'maxRssBytes'), megabytes)}`,
  );
  if (BEFORE !== undefined) {
    console.log(
      `  before:     wall ${spread(of(measured.before, 'wallMs'), seconds)}; CPU ${spread(of(measured.before, 'cpuMs'), seconds)}; peak RSS ${spread(of(measured.before, 'maxRssBytes'), megabytes)}`,
    );
    console.log(
      `  ratio (this build / before): wall ${spread(measured.wall, times)}; CPU ${spread(measured.cpu, times)}`,
    );
  }
} finally {
  if (keep) console.log(`kept ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}
