import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runDemo, SAMPLES_DIR } from '../../src/cli/demo.js';

describe('htorder demo (npm run demo)', () => {
  it('submits every sample once, re-runs send nothing, and the broken copy is refused', async () => {
    const out = await mkdtemp(join(tmpdir(), 'htorder-demo-test-'));
    // The samples as a user's checkout may have them: with the reports of an earlier
    // `htorder check samples/reorder/asset-reorder.yaml` beside the sample.
    const samples = await mkdtemp(join(tmpdir(), 'htorder-demo-samples-'));
    await cp(SAMPLES_DIR, samples, { recursive: true });
    const stale = join(samples, 'reorder', 'asset-reorder.yaml');
    await writeFile(`${stale}.result.csv`, 'orderNumber,itemType,code,quantity,status\nR-1,Asset,A1,10,valid\n');
    await writeFile(`${stale}.result.json`, '{}\n');
    await writeFile(`${stale}.errors.txt`, '');
    // The user's own config file, with a guardrail that would hold every sample: the demo reads none.
    const config = join(process.env.HOME as string, '.config', 'htorder', 'config.yaml');
    await mkdir(dirname(config), { recursive: true });
    await writeFile(config, 'maxJobCost: 1\nprofiles:\n  default:\n    baseUrl: http://127.0.0.1:9/planted\n', {
      mode: 0o600,
    });
    let text = '';
    const stdout = new Writable({
      write: (c, _e, cb) => {
        text += String(c);
        cb();
      },
    });
    expect(await runDemo({ out, samples, stdout })).toBe(0);
    expect(text).not.toContain('asset-reorder.yaml.result.csv');
    await rm(samples, { recursive: true, force: true });

    // Every manifest among the samples ran, and got its reports next to it.
    const files = (await readdir(out, { recursive: true })) as string[];
    const inputs = files.filter(
      (f) => /\.(ya?ml|json|csv|txt)$/.test(f) && !/result\.|errors\.txt$|mapping\.yaml$/.test(f),
    );
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
