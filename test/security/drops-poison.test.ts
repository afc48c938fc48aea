import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { CLI, requireDist } from '../support/dist.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * Finding 5 of issue 13 (the watch part): an input that kills the process is resumed after
 * each restart. A real watcher process is killed (SIGKILL) while processing the same file,
 * again and again: after `watchMaxInputAttempts` (3) interrupted runs the next instance sets
 * it aside to failed/ with an errors.txt instead of processing it a fourth time.
 */

let sandbox: Sandbox;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  requireDist();
  state = await tempDir('htorder-poison-state-');
  ({ sandbox, env } = await sandboxWithEnv(state.path));
});
afterAll(async () => {
  await sandbox.close();
  await state.remove();
});

function spawnWatch(dir: string): { child: ChildProcess; output: () => string; exited: Promise<unknown> } {
  const child = spawn(process.execPath, [CLI, 'watch', dir, '--scan-interval', '100', '--stable-time', '100'], {
    env: { ...process.env, ...env, HTORDER_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return { child, output: () => out, exited };
}

describe('watch: poison files', () => {
  it('sets an input aside after three runs that each ended in a crash, and goes on with the next', async () => {
    const drop = await tempDir('htorder-poison-drop-');
    await sandbox.admin.reset();
    // Creates (and dry runs) hang long enough to kill the process while it works on the input.
    await sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'latency', latencyMs: 60_000 }]);
    await writeFile(join(drop.path, 'poison.yaml'), manifest('POISON', 1));
    try {
      for (let run = 1; run <= 3; run++) {
        const w = spawnWatch(drop.path);
        // Processing has begun once the run is counted (before the first order's API call).
        await waitFor(async () => {
          const all = await readdir(join(state.path, 'attempts')).catch(() => [] as string[]);
          const files = all.filter((f) => f.endsWith('.attempts')); // not an atomic write's temporary file
          const counts = await Promise.all(files.map((f) => readFile(join(state.path, 'attempts', f), 'utf8')));
          return counts.map((c) => c.trim()).includes(String(run)) ? true : undefined;
        }, `run ${run} to work on poison.yaml`);
        w.child.kill('SIGKILL');
        await w.exited;
        expect(await readdir(join(drop.path, 'processing'))).toContain('poison.yaml');
      }
      await sandbox.admin.clearFaults();
      const last = spawnWatch(drop.path);
      try {
        const failed = join(drop.path, 'failed');
        // Reports move before the input (a reader who sees the input finds its reports): wait for both.
        await waitFor(async () => {
          const names = await readdir(failed);
          return names.includes('poison.yaml.errors.txt') && names.includes('poison.yaml') ? true : undefined;
        }, 'poison.yaml set aside');
        expect(await readFile(join(failed, 'poison.yaml.errors.txt'), 'utf8')).toMatch(
          /processing it began 3 times .* after 3 attempts it is not tried again/,
        );
        // The watcher is alive and takes the next file.
        await writeFile(join(drop.path, 'next.yaml'), manifest('NEXT', 1));
        await waitFor(
          async () => ((await readdir(join(drop.path, 'done'))).includes('next.yaml') ? true : undefined),
          'next.yaml done',
        );
        // Runs that ended without a crash leave no count behind.
        await waitFor(
          async () =>
            (await readdir(join(state.path, 'attempts'))).filter((f) => f.endsWith('.attempts')).length === 0
              ? true
              : undefined,
          'the attempt counts to be cleared',
        );
      } finally {
        last.child.kill('SIGTERM');
        await last.exited;
      }
    } finally {
      await sandbox.admin.clearFaults();
      await drop.remove();
    }
  }, 90_000);
});
