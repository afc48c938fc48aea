import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from '../../src/cli/heap-growth.js';

describe('heap growth', () => {
  it('asks V8 to grow the heap by half past what is live, unless node was given a factor of its own', () => {
    expect(heapGrowthFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowthFlag(['--enable-source-maps'])).toBe('--heap-growing-percent=50');
    expect(heapGrowthFlag(['--heap-growing-percent=20'])).toBeUndefined();
    expect(heapGrowthFlag(['--heap_growing_percent=20'])).toBeUndefined();
    expect(heapGrowthFlag(['--heap-growing-percent', '20'])).toBeUndefined();
  });

  it('is a flag this node knows', () => {
    // A flag V8 does not know is ignored without a word at run time; here node refuses it.
    const out = execFileSync(process.execPath, [heapGrowthFlag([]) ?? '', '-e', 'process.stdout.write("ok")'], {
      encoding: 'utf8',
    });
    expect(out).toBe('ok');
  });
});
