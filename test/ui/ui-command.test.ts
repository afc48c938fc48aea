import { spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireDist } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';

/** `htorder ui` as people run it: the built CLI in its own process. */

const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HTORDER_')));

describe('htorder ui (process)', () => {
  beforeAll(() => requireDist());

  it('prints its URL as the first line, serves the folder, and stops on SIGTERM with 0', async () => {
    const dir = await tempDirPerTest('htorder-ui-cmd-');
    await writeFile(join(dir, 'a.yaml'), 'version: 1\njobs: []\n');
    const child = spawn(process.execPath, [CLI, 'ui', dir], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const first = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (c: Buffer) => {
        text += String(c);
        if (text.includes('\n')) resolve(text.split('\n')[0] ?? '');
      });
      child.on('exit', (code) => reject(new Error(`exited ${code} before its URL`)));
    });
    // Like Jupyter's: the link carries a token generated for this start, and nothing opens without it.
    expect(first).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}$/);
    expect((await fetch(new URL('/', first))).status).toBe(401);
    const page = await (await fetch(first)).text();
    expect(page).toContain('a.yaml');
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);

  it('refuses, with exit 2 and why: another address without a token, a bad port, a missing folder', async () => {
    const dir = await tempDirPerTest('htorder-ui-cmd-');
    const run = (args: string[]) =>
      spawnSync(process.execPath, [CLI, 'ui', ...args], { env: cleanEnv(), encoding: 'utf8', timeout: 20_000 });
    const remote = run([dir, '--host', '0.0.0.0']);
    expect(remote.status).toBe(2);
    expect(remote.stderr).toContain('uiToken');
    expect(remote.stdout).toBe('');
    const port = run([dir, '--port', '70000']);
    expect(port.status).toBe(2);
    expect(port.stderr).toContain('--port must be a port number');
    const missing = run([join(dir, 'nope')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('not a folder');
  }, 30_000);
});
