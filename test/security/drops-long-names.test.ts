import { spawn } from 'node:child_process';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { CLI, requireDist } from '../support/dist.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * Finding 4 of issue 13: a long file name must not stop a drop folder. A name whose claim,
 * reports or timestamped names would pass the 255-byte limit is set aside to failed/ under a
 * short unique name with an errors.txt, and the scan goes on; `htorder run` checks report
 * names before it submits anything.
 */

let sandbox: Sandbox;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  requireDist();
  state = await tempDir('htorder-long-state-');
  ({ sandbox, env } = await sandboxWithEnv(state.path));
});
afterAll(async () => {
  await sandbox.close();
  await state.remove();
});

const postJobs = async (): Promise<number> => (await sandbox.admin.calls())['POST /Jobs'] ?? 0;

describe('long file names in a drop folder', () => {
  it('sets names too long to handle aside with a report and still takes the files after them', async () => {
    const drop = await tempDir('htorder-long-drop-');
    await sandbox.admin.reset();
    const n250 = `${'a'.repeat(245)}.yaml`;
    const n230 = `${'é'.repeat(112)}.yaml`; // 224 bytes of UTF-8: the limit counts bytes, not characters
    await writeFile(join(drop.path, n250), manifest('LONG-A', 2));
    await writeFile(join(drop.path, n230), manifest('LONG-B', 2));
    await writeFile(join(drop.path, 'ok.yaml'), manifest('LONG-OK', 2));
    const watch = await startWatch({ target: drop.path, flags: { fsEvents: false } }, env);
    try {
      await waitFor(
        async () => ((await readdir(join(drop.path, 'done'))).includes('ok.yaml') ? true : undefined),
        'ok.yaml done',
      );
      const failed = join(drop.path, 'failed');
      const errors = await waitFor(async () => {
        const names = (await readdir(failed)).filter((n) => n.endsWith('.errors.txt'));
        return names.length === 2 ? names : undefined;
      }, 'both long names set aside');
      for (const name of errors) {
        expect(Buffer.byteLength(name)).toBeLessThan(150);
        expect(await readFile(join(failed, name), 'utf8')).toMatch(/its name was 2\d\d bytes long.*Rename the file/);
        expect(await readdir(failed)).toContain(name.slice(0, -'.errors.txt'.length));
      }
      expect((await readdir(drop.path)).sort()).toEqual(['.htorder-ledger', 'done', 'failed', 'held', 'processing']);
      // Only ok.yaml's two orders were created (each also had a dry run: POST /Jobs counts both).
      expect((await sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual(['LONG-OK-1', 'LONG-OK-2']);
      expect(watch.logs().some((l) => String(l.msg).includes('name is too long'))).toBe(true);
    } finally {
      await watch.stop();
      await drop.remove();
    }
  }, 30_000);

  it('turns /healthz unhealthy while scans keep failing', async () => {
    const drop = await tempDir('htorder-long-health-');
    const watch = await startWatch({ target: drop.path, flags: { fsEvents: false, healthPort: 0 } }, env);
    try {
      const status = async (): Promise<number> => (await fetch(`${watch.healthUrl}/healthz`)).status;
      expect(await status()).toBe(200);
      await rename(drop.path, `${drop.path}-gone`);
      await waitFor(async () => ((await status()) === 503 ? true : undefined), '/healthz to turn 503');
      await rename(`${drop.path}-gone`, drop.path);
      await waitFor(async () => ((await status()) === 200 ? true : undefined), '/healthz to recover');
    } finally {
      await watch.stop();
      await drop.remove();
    }
  }, 30_000);

  it('htorder run refuses a name whose reports would be too long before submitting anything', async () => {
    const dir = await tempDir('htorder-long-run-');
    await sandbox.admin.reset();
    const file = join(dir.path, `${'r'.repeat(225)}.yaml`);
    await writeFile(file, manifest('LONG-RUN', 2));
    const child = spawn(process.execPath, [CLI, 'run', file], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code).toBe(2);
    expect(stderr).toMatch(/file name is 230 bytes long.*nothing was submitted/);
    expect(stderr).not.toMatch(/internal error|\n\s+at /);
    expect(await postJobs()).toBe(0);
    await dir.remove();
  }, 30_000);
});
