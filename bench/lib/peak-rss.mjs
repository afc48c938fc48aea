/**
 * This process's own peak resident set size, in bytes: Linux's VmHWM, the high-water mark of
 * the memory it has mapped since it started. Not getrusage's maxRSS: a process spawned by a
 * benchmark starts as a fork of it, and the kernel counts the benchmark's memory mapped at that
 * moment (its simulator, a warm-up's request bodies) into the child's maxRSS, which a user's
 * shell, small, does not add. Elsewhere maxRSS is all there is.
 */
import { readFileSync } from 'node:fs';

export function peakRssBytes() {
  try {
    const m = /^VmHWM:\s*(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'latin1'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // Not Linux: below.
  }
  return process.resourceUsage().maxRSS * 1024;
}
