import { existsSync } from 'node:fs';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../src/cli/demo.js';

describe('htorder demo (npm run demo)', () => {
  it('submits every sample once, re-runs send nothing, and the broken copy is refused', async () => {
    const out = await mkdtemp(join(tmpdir(), 'htorder-demo-test-'));
    let text = '';
    const stdout = new Writable({
      write: (c, _e, cb) => {
        text += String(c);
        cb();
      },
    });
    expect(await runDemo({ out, stdout })).toBe(0);

    // Every manifest among the samples ran, and got its reports next to it.
    const files = (await readdir(out, { recursive: true })) as string[];
    const inputs = files.filter((f) => /\.(ya?ml|json|csv)$/.test(f) && !/result\.|mapping\.yaml$/.test(f));
    expect(inputs.length).toBeGreaterThanOrEqual(7);
    for (const input of inputs) expect(existsSync(join(out, `${input}.result.json`)), input).toBe(true);
    expect(text).not.toMatch(/exit [23]/);
    expect(text).toMatch(/jobs in the sandbox: (\d+) before the re-run, \1 after/);
    // The demo's state (the ledger of its sandbox) goes with the sandbox; the reports stay.
    expect((await readdir(tmpdir())).filter((n) => n.startsWith('htorder-demo-state-'))).toEqual([]);
    expect(text).toMatch(
      /broken-order\.yaml:\d+:\d+: jobs\[1\]\.items\[0\]\.quantity: 5 is below the minimum quantity 10/,
    );
  }, 60_000);
});
