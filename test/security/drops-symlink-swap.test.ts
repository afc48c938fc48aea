import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, lstat, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * Finding 1 of issue 13: a dropper swaps a regular file and a symbolic link under one name, so
 * the scan sees a file and the claim moves a link. The watcher must never read through the
 * link: the secret's bytes appear in no report, and the link is set aside as refused.
 */

let sandbox: Sandbox;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  state = await tempDir('htorder-swap-state-');
  ({ sandbox, env } = await sandboxWithEnv(state.path));
});
afterAll(async () => {
  await sandbox.close();
  await state.remove();
});

/** Every regular file under `dir`, links not followed (a link set aside in failed/ points at the secret). */
async function regularFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, name);
    const info = await lstat(path).catch(() => undefined);
    if (info?.isDirectory()) out.push(...(await regularFiles(path)));
    else if (info?.isFile()) out.push(path);
  }
  return out;
}

/** A second process swapping a regular file and a link to `secret` under `name`, as fast as it can. */
const SWAPPER = `
const fs = require('node:fs');
const path = require('node:path');
const [dir, name, secret] = process.argv.slice(1);
for (let i = 0; ; i++) {
  const tmp = path.join(dir, '.swap-' + (i % 1000) + '.tmp');
  fs.rmSync(tmp, { force: true });
  if (i % 2) fs.writeFileSync(tmp, 'orderNumber,sku\\nR1,X\\n');
  else fs.symlinkSync(secret, tmp);
  fs.renameSync(tmp, path.join(dir, name));
}
`;

describe('drop folder: a file swapped for a symbolic link (race with a second process)', () => {
  it('never reads through the link: the secret is in no report and the link is refused', async () => {
    const drop = await tempDir('htorder-swap-drop-');
    const outside = await tempDir('htorder-swap-secret-');
    const marker = `TOPSECRET-${randomUUID()}`;
    const secret = join(outside.path, 'secret.csv');
    await writeFile(secret, `orderNumber,token\n${marker},${marker}\n`, { mode: 0o600 });
    await chmod(secret, 0o600);
    const watch = await startWatch(
      { target: drop.path, flags: { scanIntervalMs: 20, stableTimeMs: 0, fsEvents: false } },
      { ...env, HTORDER_LOG_LEVEL: 'warn' },
    );
    const swapper = spawn(process.execPath, ['-e', SWAPPER, drop.path, 'orders.csv', secret], { stdio: 'ignore' });
    try {
      const failed = join(drop.path, 'failed');
      const refusedLinks = async (): Promise<number> => {
        let n = 0;
        for (const f of await regularFiles(failed)) {
          if (f.endsWith('.errors.txt') && (await readFile(f, 'utf8')).includes('symbolic link')) n += 1;
        }
        return n;
      };
      // Both kinds must have gone through the claim: links refused, regular files processed.
      await waitFor(
        async () => {
          const processed = (await regularFiles(failed)).filter((f) => f.endsWith('.result.json')).length;
          return (await refusedLinks()) >= 3 && processed >= 3 ? true : undefined;
        },
        'links refused and regular files processed while the name is swapped',
        30_000,
      );
    } finally {
      swapper.kill('SIGKILL');
      await new Promise((r) => swapper.once('exit', r));
      await watch.stop();
    }
    const reports = await regularFiles(drop.path);
    expect(reports.length).toBeGreaterThan(6);
    for (const file of reports) {
      expect((await readFile(file)).includes(marker), `${file} holds the secret`).toBe(false);
    }
    // The state directory's private copies are gone once each input is finished.
    for (const file of await regularFiles(join(state.path, 'work'))) {
      expect((await readFile(file)).includes(marker), `${file} holds the secret`).toBe(false);
    }
    await drop.remove();
    await outside.remove();
  }, 60_000);

  it('writes reports with the input group and never more readable than the input', async () => {
    const drop = await tempDir('htorder-swap-mode-');
    const watch = await startWatch({ target: drop.path, flags: { fsEvents: false } }, env);
    try {
      const privateFile = join(drop.path, 'private.yaml');
      const publicFile = join(drop.path, 'public.yaml');
      await writeFile(privateFile, manifest('MODE-P', 1), { mode: 0o600 });
      await chmod(privateFile, 0o600);
      await writeFile(publicFile, manifest('MODE-Q', 1));
      await chmod(publicFile, 0o644);
      const done = join(drop.path, 'done');
      // Reports are in place before the input moves: wait for the inputs.
      await waitFor(
        async () => ((await readdir(done)).filter((n) => n.endsWith('.yaml')).length === 2 ? true : undefined),
        'both inputs done',
      );
      for (const suffix of ['.result.json', '.result.csv']) {
        expect((await lstat(join(done, `private.yaml${suffix}`))).mode & 0o777).toBe(0o600);
        expect((await lstat(join(done, `public.yaml${suffix}`))).mode & 0o777).toBe(0o644);
      }
      const input = await lstat(join(done, 'private.yaml'));
      expect((await lstat(join(done, 'private.yaml.result.json'))).gid).toBe(input.gid);
    } finally {
      await watch.stop();
      await drop.remove();
    }
  }, 30_000);
});
