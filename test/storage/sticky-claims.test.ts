import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, chown, mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { stickyRefusal } from '../../src/storage/sticky-claims.js';
import { CLI, requireDist } from '../support/dist.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * A sticky shared drop folder that is not the watcher's user's: a file another user dropped
 * cannot be renamed into processing/ by the watcher (only the file's or the folder's owner may).
 * The watcher says once why and how to fix it, leaves the file alone until it changes, and
 * takes it once it is the watcher's user's. Real users: the watcher runs under another uid
 * (the test must be root to start it so, and to give the file a third owner).
 */

const WATCHER = 4321;
const DROPPER = 4322;
const isRoot = process.getuid?.() === 0;

describe('stickyRefusal (pure)', () => {
  const sticky = { uid: 0, mode: 0o41777 };
  it('names the owners, the sticky bit and the fixes, only when the sticky bit is the cause', () => {
    const why = stickyRefusal('/srv/drop', { uid: DROPPER }, sticky, WATCHER);
    expect(why).toContain(`it belongs to uid ${DROPPER}, not to the watcher's user (uid ${WATCHER}`);
    expect(why).toContain('/srv/drop has the sticky bit and belongs to uid 0');
    expect(why).toMatch(
      /Fix: give the folder to the watcher's user \(chown \S+ \/srv\/drop; keep it sticky\), or drop files as the watcher's user$/,
    );
    // The watcher's own file, its own folder, a folder without the sticky bit, root: not the cause.
    expect(stickyRefusal('/srv/drop', { uid: WATCHER }, sticky, WATCHER)).toBeUndefined();
    expect(stickyRefusal('/srv/drop', { uid: DROPPER }, { ...sticky, uid: WATCHER }, WATCHER)).toBeUndefined();
    expect(stickyRefusal('/srv/drop', { uid: DROPPER }, { uid: 0, mode: 0o40777 }, WATCHER)).toBeUndefined();
    expect(stickyRefusal('/srv/drop', { uid: DROPPER }, sticky, 0)).toBeUndefined();
  });
});

describe.skipIf(!isRoot)('a watcher under its own user, on a sticky folder it does not own', () => {
  let sandbox: Sandbox;
  let env: Record<string, string>;
  let state: Awaited<ReturnType<typeof tempDir>>;
  let drop: Awaited<ReturnType<typeof tempDir>>;
  /** The folders above ours in the run's temporary folder, opened for the watcher's user to pass through. */
  const opened: { path: string; mode: number }[] = [];
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    requireDist();
    state = await tempDir('htorder-sticky-state-');
    drop = await tempDir('htorder-sticky-drop-');
    ({ sandbox, env } = await sandboxWithEnv(state.path));
    await mkdir(join(state.path, 'config'));
    await chown(state.path, WATCHER, WATCHER);
    await chown(join(state.path, 'config'), WATCHER, WATCHER);
    // A shared drop folder as /tmp is: root's, world-writable, sticky.
    await chmod(drop.path, 0o1777);
    // The run's private temporary folders (0700) up to the first the watcher's user may pass.
    for (let dir = dirname(drop.path); dir !== dirname(dir); dir = dirname(dir)) {
      const { mode } = await stat(dir);
      if ((mode & 0o001) !== 0) break;
      opened.push({ path: dir, mode: mode & 0o7777 });
      await chmod(dir, (mode & 0o7777) | 0o011);
    }
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const { path, mode } of opened.reverse()) await chmod(path, mode).catch(() => undefined);
    await sandbox?.close();
    await drop?.remove();
    await state?.remove();
  });

  it('says once why a file another user dropped cannot be claimed, leaves it alone, and takes it once it changes', async () => {
    child = spawn(process.execPath, [CLI, 'watch', drop.path, '--scan-interval', '100', '--stable-time', '100'], {
      uid: WATCHER,
      gid: WATCHER,
      cwd: state.path,
      env: {
        ...env,
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: state.path,
        XDG_CONFIG_HOME: join(state.path, 'config'),
        HTORDER_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await waitFor(() => (out.includes('watching for manifests') ? true : undefined), 'the watcher to start', 60_000);

    // Dropped as the other user's: written under a hidden name, given to that user, then renamed in.
    const file = join(drop.path, 'a.yaml');
    const hidden = join(drop.path, '.a.yaml.tmp');
    await writeFile(hidden, manifest('STK'), { mode: 0o644 });
    await chown(hidden, DROPPER, DROPPER);
    await rename(hidden, file);
    await waitFor(() => (out.includes('not taken: it belongs to') ? true : undefined), 'the refusal', 30_000);
    // Many scans later: said once, not retried, the file where it was.
    await sleep(1500);
    const told = out.split('\n').filter((l) => l.includes('not taken: it belongs to'));
    expect(told).toHaveLength(1);
    const line = JSON.parse(told[0]!) as { name: string; msg: string };
    expect(line.name).toBe('a.yaml');
    expect(line.msg).toContain(`it belongs to uid ${DROPPER}, not to the watcher's user (uid ${WATCHER})`);
    expect(line.msg).toContain(`${drop.path} has the sticky bit and belongs to uid 0`);
    expect(line.msg).toContain(`chown ${WATCHER} ${drop.path}`);
    expect(out).not.toContain('could not claim this input');
    expect(await readdir(drop.path)).toContain('a.yaml');
    expect(await sandbox.admin.jobs()).toEqual([]);

    // The file given to the watcher's user: taken at the next scan, ordered once.
    await chown(file, WATCHER, WATCHER);
    await waitFor(
      async () =>
        (await readdir(join(drop.path, 'done')).catch(() => [] as string[])).includes('a.yaml') ? true : undefined,
      'a.yaml in done/',
      30_000,
    );
    expect((await sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['STK-1']);
    child.kill('SIGTERM');
    expect(await new Promise((r) => child!.on('exit', r))).toBe(0);
  }, 120_000);
});
