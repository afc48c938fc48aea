import { execFile } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runWatch } from '../../src/app/watch-daemon.js';
import { CLI, requireDist } from '../support/dist.js';
import { sink } from '../support/sink.js';
import { tempDir } from '../support/temp-files.js';
import { startWatch, watchFixture } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * The watcher's ports (--health-port, --ui --ui-port): one that cannot be bound is said with
 * the flags and settings that chose it, ends the start with exit 2 before any input is claimed,
 * and leaves nothing behind; a watcher that stops normally leaves nothing either.
 */

const fx = watchFixture('htorder-ports-');

/** A port of 127.0.0.1 that another server holds for the file's tests. */
let taken: Server;
let port: number;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  port = (taken.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => taken.close(() => resolve()));
});

let abort: AbortController;
beforeEach(async () => {
  abort = new AbortController();
  await writeFile(join(fx.drop.path, 'orders.yaml'), manifest('PORTS'));
});
// A watcher that did start after all (the defect) is stopped, not left running.
afterEach(() => abort.abort());

/** This instance's private folders under the state dir (the FolderSource's work folder). */
const workFolders = async (): Promise<string[]> => readdir(join(fx.state.path, 'work')).catch(() => []);

async function watchWith(env: Record<string, string>, ui = false): Promise<{ code: number; stderr: string }> {
  const stderr = sink();
  const code = await runWatch(
    { target: fx.drop.path, flags: {}, ui },
    { stderr: stderr.stream, env: { ...fx.env, ...env }, cwd: fx.drop.path, signal: abort.signal },
  );
  return { code, stderr: stderr.text() };
}

describe('a port the watcher cannot bind', () => {
  it('--health-port: names the flags and settings, exits 2, claims nothing, removes its work folder', async () => {
    const { code, stderr } = await watchWith({ HTORDER_HEALTH_PORT: String(port) });
    expect(stderr).toContain(
      `htorder watch: cannot listen on 127.0.0.1 port ${port} (--health-host, --health-port; healthHost, healthPort): listen EADDRINUSE`,
    );
    expect(code).toBe(2);
    expect(await readdir(fx.drop.path)).toContain('orders.yaml');
    expect(await workFolders()).toEqual([]);
  });

  it('--ui --ui-port: names the flags and settings, exits 2, claims nothing, removes its work folder', async () => {
    const { code, stderr } = await watchWith({ HTORDER_UI_PORT: String(port) }, true);
    expect(stderr).toContain(
      `htorder watch: cannot listen on 127.0.0.1 port ${port} (--ui-host, --ui-port; uiHost, uiPort): listen EADDRINUSE`,
    );
    expect(code).toBe(2);
    expect(await readdir(fx.drop.path)).toContain('orders.yaml');
    expect(await workFolders()).toEqual([]);
  });

  it('the command line: `htorder watch --health-port N` in use ends with exit 2 and the message, no stack', async () => {
    requireDist();
    const run = promisify(execFile)(process.execPath, [CLI, 'watch', fx.drop.path, '--health-port', String(port)], {
      env: { ...process.env, ...fx.env },
      timeout: 20_000,
    });
    const err = await run.then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toContain(`cannot listen on 127.0.0.1 port ${port} (--health-host, --health-port;`);
    expect(err?.stderr).not.toContain('internal error');
  });
});

describe('a watcher that stops', () => {
  it('removes its private work folder from the state dir', async () => {
    const state = await tempDir('htorder-ports-own-state-');
    const watch = await startWatch({ target: fx.drop.path }, { ...fx.env, HTORDER_STATE_DIR: state.path });
    expect(await readdir(join(state.path, 'work'))).toHaveLength(1);
    expect(await watch.stop()).toBe(0);
    expect(await readdir(join(state.path, 'work'))).toEqual([]);
  });
});
