import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPipelineCommand } from '../../../src/cli/run-pipeline.js';
import { runApply } from '../../../src/cli/saved-plan-command.js';
import { sink } from '../../support/sink.js';
import { tempDir } from '../../support/temp-files.js';
import { type RunningWatch, startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

/**
 * Watchers of one drop folder must share one ledger: an input a killed watcher left in
 * processing/ is resumed by another, and only the killed one's ledger knows which of its orders
 * were sent. The folder is marked with its ledger's id (`.htorder-ledger`); a watcher of another
 * ledger stops at start (exit 2) with the fix, unless told to take the folder over.
 */
const fx = watchFixture('htorder-shared-drop-');
const running: RunningWatch[] = [];
/** Stops the watchers the test started: before a folder they write in is removed, and after each test. */
const stopAll = async (): Promise<void> => {
  for (const w of running.splice(0)) await w.stop();
};
afterEach(stopAll);

const start = async (env: Record<string, string>, replaceLedger = false): Promise<RunningWatch> => {
  const w = await startWatch({ target: fx.drop.path, replaceLedger, flags: { leaseMs: 1000 } }, env);
  running.push(w);
  return w;
};
const mark = async (): Promise<{ ledgerId: string; ledger: string }> =>
  JSON.parse(await readFile(join(fx.drop.path, '.htorder-ledger'), 'utf8'));

describe('a drop folder shared by watchers', () => {
  it('runs every watcher of the same state dir; each file once', async () => {
    await start(fx.env);
    await start(fx.env);
    expect((await mark()).ledger).toBe(fx.state.path);
    for (let i = 1; i <= 4; i++) await writeFile(join(fx.drop.path, `s${i}.yaml`), manifest(`S${i}`));
    const done = async () => (await readdir(join(fx.drop.path, 'done'))).filter((n) => n.endsWith('.yaml'));
    await waitFor(async () => ((await done()).length === 4 ? true : undefined), 'four inputs in done/');
    expect((await fx.sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual(['S1-1', 'S2-1', 'S3-1', 'S4-1']);
  });

  it('stops a watcher of another state dir at start (exit 2), saying how to fix it', async () => {
    await start(fx.env);
    const other = await tempDir('htorder-shared-drop-other-');
    try {
      const refused = await start({ ...fx.env, HTORDER_STATE_DIR: other.path }).catch((err: Error) => err);
      expect(refused).toBeInstanceOf(Error);
      expect(String(refused)).toMatch(/ended early with 2/);
      expect(String(refused)).toContain(`names ${fx.state.path}`);
      expect(String(refused)).toMatch(/same stateDir.*--replace-ledger/s);
    } finally {
      await stopAll();
      await other.remove();
    }
  });

  it('takes the folder over with --replace-ledger; the old ledger’s watcher then stops', async () => {
    const old = await start(fx.env);
    const other = await tempDir('htorder-shared-drop-new-');
    try {
      await start({ ...fx.env, HTORDER_STATE_DIR: other.path }, true);
      expect((await mark()).ledger).toBe(other.path);
      // At its next look in processing/ (every lease, here 1 s), the old one finds the mark changed.
      await waitFor(
        () => (old.logs().some((l) => String(l.msg).includes('marked for another ledger')) ? true : undefined),
        'the old watcher to stop',
      );
      expect(await old.stop()).toBe(2);
    } finally {
      // The new watcher writes in its state dir (`other`) until it stops.
      await stopAll();
      await other.remove();
    }
  });
});

describe('htorder run of a file in a drop folder', () => {
  /** One `htorder run FILE` in the test process: its exit code and what it said. */
  const run = async (file: string, env: Record<string, string>): Promise<{ code: number; err: string }> => {
    const stderr = sink();
    const code = await runPipelineCommand(
      { command: 'run', files: [file], flags: {} },
      { stdout: sink().stream, stderr: stderr.stream, env, cwd: fx.drop.path },
    );
    return { code, err: stderr.text() };
  };

  it("refuses a file in or under a folder watched with another ledger (exit 2, nothing sent), and runs it with the folder's", async () => {
    // A watcher of the state dir fx.state marks the folder; it is stopped before the files are there.
    await start(fx.env);
    await stopAll();
    const top = join(fx.drop.path, 'night.yaml');
    const done = join(fx.drop.path, 'done', 'last.yaml');
    await writeFile(top, manifest('RT'));
    await writeFile(done, manifest('RD'));
    const other = await tempDir('htorder-shared-drop-run-');
    try {
      for (const file of [top, done]) {
        const { code, err } = await run(file, { ...fx.env, HTORDER_STATE_DIR: other.path });
        expect(code, err).toBe(2);
        expect(err).toContain(`${file} is in the drop folder ${fx.drop.path}`);
        expect(err).toContain(`its .htorder-ledger names ${fx.state.path}`);
        expect(err).toContain(`this run's ledger is ${other.path}`);
        expect(err).toContain(`htorder run --state-dir ${fx.state.path}`);
        expect(err).toContain('nothing was sent');
      }
      expect(await fx.sandbox.admin.jobs()).toEqual([]);
      expect(existsSync(`${top}.result.json`)).toBe(false);
      // With the folder's own ledger it runs.
      const { code, err } = await run(top, fx.env);
      expect(code, err).toBe(0);
      expect((await fx.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['RT-1']);
    } finally {
      await other.remove();
    }
  });

  it("refuses to apply a plan of such a file through another ledger, and applies it through the folder's", async () => {
    await start(fx.env);
    await stopAll();
    const top = join(fx.drop.path, 'planned.yaml');
    await writeFile(top, manifest('AP'));
    const other = await tempDir('htorder-shared-drop-apply-');
    const plan = join(other.path, 'plan.json');
    const io = (env: Record<string, string>) => {
      const stderr = sink();
      return { stderr, io: { stdout: sink().stream, stderr: stderr.stream, env, cwd: fx.drop.path } };
    };
    try {
      // plan sends nothing: it is not checked against the folder's ledger.
      const planned = io({ ...fx.env, HTORDER_STATE_DIR: other.path });
      const planCode = await runPipelineCommand({ command: 'plan', files: [top], out: plan, flags: {} }, planned.io);
      expect(planCode, planned.stderr.text()).toBe(0);
      const elsewhere = io({ ...fx.env, HTORDER_STATE_DIR: other.path });
      expect(await runApply({ plan, flags: {} }, elsewhere.io), elsewhere.stderr.text()).toBe(2);
      expect(elsewhere.stderr.text()).toContain(`htorder apply: ${top} is in the drop folder ${fx.drop.path}`);
      expect(elsewhere.stderr.text()).toContain(`htorder apply --state-dir ${fx.state.path}`);
      expect(await fx.sandbox.admin.jobs()).toEqual([]);
      const own = io(fx.env);
      expect(await runApply({ plan, flags: {} }, own.io), own.stderr.text()).toBe(0);
      expect((await fx.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['AP-1']);
    } finally {
      await other.remove();
    }
  });

  it('says an input named through a file is missing, as for any other missing input', async () => {
    await writeFile(join(fx.drop.path, 'notes.txt'), 'not a folder');
    const { code, err } = await run(join(fx.drop.path, 'notes.txt', 'x.yaml'), fx.env);
    expect(code, err).toBe(2);
    expect(err).toContain('x.yaml: no such file (not processed, no reports written)');
  });
});
