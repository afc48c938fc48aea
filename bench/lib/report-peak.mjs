/**
 * Preloaded into a benchmarked child (`node --import bench/lib/report-peak.mjs …`): when the
 * process exits, however it exits, writes its peak resident set size and CPU time to the file
 * named by HTORDER_BENCH_STATS. The kernel's own high-water mark (getrusage maxRSS) is exact,
 * unlike polling /proc from outside, which can miss a short peak just before exit.
 */
import { writeFileSync } from 'node:fs';

const out = process.env.HTORDER_BENCH_STATS;
if (out) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(
      out,
      JSON.stringify({ maxRssBytes: u.maxRSS * 1024, userMs: u.userCPUTime / 1000, systemMs: u.systemCPUTime / 1000 }),
    );
  });
}
