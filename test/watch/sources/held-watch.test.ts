import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runApprove } from '../../../src/cli/approve-command.js';
import { sink } from '../../support/sink.js';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

const fx = watchFixture('htorder-held-');

async function creates(): Promise<number> {
  return (await fx.sandbox.admin.jobs()).length;
}

describe('watch: an input whose jobs wait for approval', () => {
  it('lands in held/ with its reports; once approved it is taken back, submitted once and moves to done/', async () => {
    const env = { ...fx.env, HTORDER_MAX_JOB_COST: '1', HTORDER_LOG_LEVEL: 'info' };
    const w = await startWatch({ target: fx.drop.path }, env);
    try {
      await writeFile(join(fx.drop.path, 'big.yaml'), manifest('BIG', 1));
      const held = join(fx.drop.path, 'held');
      // The input moves last, after its reports.
      await waitFor(() => (existsSync(join(held, 'big.yaml')) ? true : undefined), 'big.yaml in held/');
      expect(existsSync(join(held, 'big.yaml'))).toBe(true);
      expect(existsSync(join(held, 'big.yaml.errors.txt'))).toBe(true);
      expect(await creates()).toBe(0);
      expect(w.events().some((e) => e.kind === 'input' && e.phase === 'held')).toBe(true);

      const out = sink();
      const err = sink();
      const code = await runApprove(
        { paths: [join(held, 'big.yaml.result.json')], note: 'expected', flags: {} },
        { stdout: out.stream, stderr: err.stream, env, cwd: fx.drop.path },
      );
      expect(code, err.text()).toBe(0);

      const done = join(fx.drop.path, 'done');
      await waitFor(() => (existsSync(join(done, 'big.yaml')) ? true : undefined), 'big.yaml in done/');
      expect(await creates()).toBe(1);
      expect(await readdir(held)).toEqual([]);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });
});
