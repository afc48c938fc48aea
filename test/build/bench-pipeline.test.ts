import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireDist, ROOT } from '../support/dist.js';

/** `npm run bench`'s script as a user runs it with options (the build already made), its output and exit code. */
async function bench(args: string[]): Promise<{ code: number; out: string }> {
  requireDist();
  const child = spawn(process.execPath, [join(ROOT, 'bench/pipeline.mjs'), ...args], {
    cwd: ROOT,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const [code] = await once(child, 'close');
  return { code: code as number, out };
}

describe('npm run bench', () => {
  it('measures several sizes in one invocation, each size with order numbers of its own, and the exactly-once floor', async () => {
    // The ledger stays from one size to the next: a size that reused the last one's order numbers
    // found them submitted and sent nothing, and the benchmark failed at its second size.
    const { code, out } = await bench([
      '--jobs',
      '3,4',
      '--runs',
      '1',
      '--first-runs',
      '1',
      '--latency',
      '0',
      '--concurrency',
      '2',
      '--floor',
    ]);
    expect(out, out).not.toMatch(/Error/);
    expect(code).toBe(0);
    for (const jobs of [3, 4]) expect(out).toContain(`htorder run vs a bare client: ${jobs} jobs`);
    expect(out.match(/exactly-once floor \d+\.\d+ s \(CPU \d+\.\d+ s\) · \d+\.\d+× the bare client/g)).toHaveLength(2);
    expect(out.match(/the exactly-once floor ÷ the bare client/g)).toHaveLength(2);
  }, 180_000);
});
