import { spawn } from 'node:child_process';
import { chmod, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor } from '../support/watch-harness.js';

/**
 * A dropper who may write the drop folder swaps `failed/` with a symbolic link to a private
 * folder of the watcher's user, back and forth, while the watcher fails inputs into it. The
 * watcher creates and moves files only through the folder it holds open, and checks the
 * folder's identity after each move: nothing is ever created in the link's target.
 */

let sandbox: Sandbox;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  state = await tempDir('htorder-dirswap-state-');
  ({ sandbox, env } = await sandboxWithEnv(state.path));
});
afterAll(async () => {
  await sandbox.close();
  await state.remove();
});

/** A second process exchanging `failed` and a link to `target` under the name `failed`, as fast as it can. */
const SWAPPER = `
const fs = require('node:fs');
const path = require('node:path');
const [dir, target] = process.argv.slice(1);
const failed = path.join(dir, 'failed');
const link = path.join(dir, '.failed-link');
const aside = path.join(dir, '.failed-real');
fs.symlinkSync(target, link);
for (;;) {
  try {
    fs.renameSync(failed, aside);
    fs.renameSync(link, failed);
    fs.renameSync(failed, link);
    fs.renameSync(aside, failed);
  } catch {}
}
`;

describe('drop folder: failed/ swapped with a symbolic link (race with a second process)', () => {
  it('never creates a file in the link target while failing inputs', async () => {
    const drop = await tempDir('htorder-dirswap-drop-');
    const outside = await tempDir('htorder-dirswap-private-');
    await mkdir(join(drop.path, 'failed'));
    const watch = await startWatch(
      { target: drop.path, flags: { scanIntervalMs: 20, stableTimeMs: 0, fsEvents: false } },
      { ...env, HTORDER_LOG_LEVEL: 'error' },
    );
    const swapper = spawn(process.execPath, ['-e', SWAPPER, drop.path, outside.path], { stdio: 'ignore' });
    let dropped = 0;
    try {
      // Inputs that fail at once (not valid YAML): each finish writes errors.txt and moves the input into failed/.
      await waitFor(
        async () => {
          await writeFile(join(drop.path, `bad-${dropped++}.yaml`), 'orders: [unclosed\n');
          const settled = watch.events().filter((e) => e.kind === 'input' && e.phase === 'failed').length;
          return settled >= 40 || dropped >= 400 ? true : undefined;
        },
        'inputs failed while failed/ is swapped',
        40_000,
      );
      expect(await readdir(outside.path)).toEqual([]);
      swapper.kill('SIGKILL');
      await new Promise((r) => swapper.once('exit', r));
      // The swapper stopped mid-swap: put the real failed/ back, as an operator would.
      await rm(join(drop.path, 'failed'), { force: true }).catch(() => undefined);
      await rename(join(drop.path, '.failed-real'), join(drop.path, 'failed')).catch(() => undefined);
      // Every input ends in failed/, exactly once: none lost, none twice.
      await waitFor(
        async () => {
          const inputs = (await readdir(join(drop.path, 'failed'))).filter((n) =>
            /^bad-\d+(\.\d+T\d+Z)?\.yaml$/.test(n),
          );
          return inputs.length === dropped ? true : undefined;
        },
        'every input failed once',
        30_000,
      );
    } finally {
      swapper.kill('SIGKILL');
      await watch.stop();
    }
    expect(await readdir(outside.path)).toEqual([]);
    await drop.remove();
    await outside.remove();
  }, 60_000);

  it('refuses to start on a drop folder others may write unless it is sticky (chmod +t)', async () => {
    const drop = await tempDir('htorder-dirswap-mode-');
    try {
      await chmod(drop.path, 0o2775);
      await expect(startWatch({ target: drop.path, flags: { fsEvents: false } }, env)).rejects.toThrow(
        `watch ended early with 2: htorder watch: the drop folder ${drop.path} (mode 2775) may be written by group or others but has no sticky bit`,
      );
      await chmod(drop.path, 0o3775);
      const watch = await startWatch({ target: drop.path, flags: { fsEvents: false } }, env);
      expect(await watch.stop()).toBe(0);
    } finally {
      await drop.remove();
    }
  }, 30_000);
});
