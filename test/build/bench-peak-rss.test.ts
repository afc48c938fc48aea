import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const REPORT_PEAK = fileURLToPath(new URL('../../bench/lib/report-peak.mjs', import.meta.url));
let dir: string | undefined;

afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The peak RSS report-peak.mjs writes for a child that does almost nothing. */
async function idleChildPeak(): Promise<number> {
  dir = await mkdtemp(join(tmpdir(), 'htorder-peak-'));
  const stats = join(dir, 'stats.json');
  const child = spawn(process.execPath, ['--import', REPORT_PEAK, '-e', ''], {
    env: { ...process.env, HTORDER_BENCH_STATS: stats },
    stdio: 'ignore',
  });
  await new Promise((resolve) => child.on('close', resolve));
  return (JSON.parse(await readFile(stats, 'utf8')) as { maxRssBytes: number }).maxRssBytes;
}

describe.runIf(process.platform === 'linux')("a benchmarked child's peak RSS", () => {
  it('is its own, not the memory of the process that spawned it', async () => {
    // Filled, so resident: what a benchmark holds when it starts a run (the simulator, request bodies).
    const held = Array.from({ length: 300 }, () => Buffer.alloc(1 << 20, 7));
    const peak = await idleChildPeak();
    expect(held.length).toBe(300);
    // A bare node process peaks near 50 MB; the spawner's 300 MB counted in would show here.
    expect(peak).toBeGreaterThan(10 << 20);
    expect(peak).toBeLessThan(150 << 20);
  });
});
