import { existsSync } from 'node:fs';
import { chmod, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runApprove, type ApproveInput } from '../../../src/cli/approve-command.js';
import { sink } from '../../support/sink.js';
import { tempDirPerTest } from '../../support/temp-files.js';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

const fx = watchFixture('htorder-held-');

async function creates(): Promise<number> {
  return (await fx.sandbox.admin.jobs()).length;
}

async function approve(
  opts: Partial<ApproveInput>,
  env: Record<string, string>,
  cwd = fx.drop.path,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await runApprove(
    { paths: [], flags: {}, ...opts },
    { stdout: out.stream, stderr: err.stream, env, cwd },
  );
  return { code, stdout: out.text(), stderr: err.text() };
}

async function inFolder(folder: string, name: string): Promise<true> {
  return waitFor(() => (existsSync(join(fx.drop.path, folder, name)) ? true : undefined), `${name} in ${folder}/`);
}

/** The approval notes of the ledger in `state` (every account's). */
async function approvalNotes(state = fx.state.path): Promise<string[]> {
  const root = join(state, 'ledger');
  const names: string[] = [];
  for (const account of await readdir(root).catch(() => [])) {
    names.push(...(await readdir(join(root, account))).filter((n) => /^\.(held|approved)-/.test(n)));
  }
  return names;
}

describe('watch: an input whose jobs wait for approval', () => {
  it('lands in held/ with its reports; once approved it is taken back, submitted once and moves to done/', async () => {
    const env = { ...fx.env, HTORDER_MAX_JOB_COST: '1', HTORDER_LOG_LEVEL: 'info' };
    const w = await startWatch({ target: fx.drop.path }, env);
    try {
      await writeFile(join(fx.drop.path, 'big.yaml'), manifest('BIG', 1));
      const held = join(fx.drop.path, 'held');
      // The input moves last, after its reports.
      await inFolder('held', 'big.yaml');
      expect(existsSync(join(held, 'big.yaml.errors.txt'))).toBe(true);
      expect(await creates()).toBe(0);
      // The event is logged after the move: read from the watcher's output a moment later.
      await waitFor(
        async () => (w.events().some((e) => e.kind === 'input' && e.phase === 'held') ? true : undefined),
        'the watcher to tell that the input is held',
      );

      // The watcher notes where the input waits right after moving it there.
      await waitFor(
        async () => ((await approve({ list: true }, env)).stderr.includes(join(held, 'big.yaml')) ? true : undefined),
        'approve --list to name held/big.yaml',
      );
      const ok = await approve({ paths: [join(held, 'big.yaml.result.json')], note: 'expected' }, env);
      expect(ok.code, ok.stderr).toBe(0);

      await inFolder('done', 'big.yaml');
      expect(await creates()).toBe(1);
      expect(await readdir(held)).toEqual([]);
      // Used, its notes went.
      await waitFor(async () => ((await approvalNotes()).length === 0 ? true : undefined), 'the notes to go');
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it('approve takes held/X, any of its reports or where it was dropped; --list names held/X', async () => {
    const env = { ...fx.env, HTORDER_MAX_JOB_COST: '1' };
    const w = await startWatch({ target: fx.drop.path }, env);
    try {
      await writeFile(join(fx.drop.path, 'three.yaml'), manifest('FORM', 3));
      await inFolder('held', 'three.yaml');
      const heldFile = join(fx.drop.path, 'held', 'three.yaml');
      // The watcher notes where the input waits right after moving it there.
      const listed = await waitFor(async () => {
        const r = await approve({ list: true }, env);
        return r.stderr.includes(heldFile) ? r : undefined;
      }, 'approve --list to name held/three.yaml');
      expect(listed.stderr).toContain(`FORM-1 (estimate 150.00 USD)`);
      expect(listed.stderr).toContain(`in ${heldFile}\n`);
      expect(listed.stderr).not.toContain('processing');
      expect(listed.stderr).not.toContain(fx.state.path);

      // Where it was dropped: gone from there, found in the ledger by that path.
      const byDrop = await approve({ paths: ['three.yaml'], orders: ['FORM-1'] }, env);
      expect(byDrop.code, byDrop.stderr).toBe(0);
      expect(byDrop.stderr).toContain('three.yaml: approved FORM-1');
      const byReport = await approve({ paths: ['held/three.yaml.errors.txt'], orders: ['FORM-2'] }, env);
      expect(byReport.code, byReport.stderr).toBe(0);
      expect(await creates()).toBe(0);
      const byHeld = await approve({ paths: ['three.yaml'], orders: ['FORM-3'] }, env, join(fx.drop.path, 'held'));
      expect(byHeld.code, byHeld.stderr).toBe(0);

      await inFolder('done', 'three.yaml');
      expect(await creates()).toBe(3);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it("a missing path is one line (exit 1); another state dir says which it searched and how to point at the watcher's", async () => {
    const env = { ...fx.env, HTORDER_MAX_JOB_COST: '1' };
    const w = await startWatch({ target: fx.drop.path }, env);
    try {
      await writeFile(join(fx.drop.path, 'lost.yaml'), manifest('LOST', 1));
      await inFolder('held', 'lost.yaml');
      const missing = await approve({ paths: ['held/nope.yaml'] }, env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toBe(
        `htorder approve: held/nope.yaml: no such file, and the ledger of state dir ${fx.state.path} holds no input held from there\n`,
      );

      const elsewhere = await tempDirPerTest('htorder-other-state-');
      const other = await approve({ paths: ['held/lost.yaml'] }, { ...env, HTORDER_STATE_DIR: elsewhere });
      expect(other.code).toBe(1);
      expect(other.stderr).toContain(
        `held/lost.yaml: no job of it waits for approval in the ledger of state dir ${elsewhere}`,
      );
      expect(other.stderr).toContain('HTORDER_STATE_DIR');
      expect(other.stderr).toContain('profile');
      expect(other.stderr).not.toContain('    at ');
      expect(existsSync(join(fx.drop.path, 'held', 'lost.yaml'))).toBe(true);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it('a name dropped twice and held twice: approve by that name asks which held file', async () => {
    const env = { ...fx.env, HTORDER_MAX_JOB_COST: '1' };
    const w = await startWatch({ target: fx.drop.path }, env);
    try {
      await writeFile(join(fx.drop.path, 'twice.yaml'), manifest('TWICE-A', 1));
      await inFolder('held', 'twice.yaml');
      await writeFile(join(fx.drop.path, 'twice.yaml'), manifest('TWICE-B', 1));
      const second = await waitFor(async () => {
        const names = await readdir(join(fx.drop.path, 'held'));
        return names.find((n) => n.startsWith('twice.') && n.endsWith('.yaml') && n !== 'twice.yaml');
      }, 'the second twice.yaml in held/');
      // Once the watcher has noted where each waits.
      await waitFor(async () => {
        const listed = JSON.parse((await approve({ list: true, json: true }, env)).stdout) as {
          waiting: { input: { held?: string } }[];
        };
        return listed.waiting.filter((j) => j.input.held?.includes('twice')).length === 2 ? true : undefined;
      }, 'both held notes to say where they wait');
      const r = await approve({ paths: ['twice.yaml'] }, env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('twice.yaml: 2 held inputs came from there; approve one by its file:');
      expect(r.stderr).toContain(join(fx.drop.path, 'held', second));
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(await creates()).toBe(0);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it('an input removed from held/ takes its held note along', async () => {
    const env = { ...fx.env, HTORDER_MAX_JOB_COST: '1', HTORDER_LOG_LEVEL: 'debug' };
    const before = (await approvalNotes()).length;
    const w = await startWatch({ target: fx.drop.path }, env);
    try {
      await writeFile(join(fx.drop.path, 'gone.yaml'), manifest('GONE', 1));
      await inFolder('held', 'gone.yaml');
      expect(await approvalNotes()).toHaveLength(before + 1);
      // Once the watcher has seen it there.
      await waitFor(
        () => (w.logs().some((l) => l.msg === 'looked at the inputs in held/' && l.held === 1) ? true : undefined),
        'the watcher to look at held/',
      );
      await rm(join(fx.drop.path, 'held', 'gone.yaml'));
      await waitFor(async () => ((await approvalNotes()).length === before ? true : undefined), 'the held note to go');
      expect((await approve({ list: true }, env)).stderr).not.toContain('GONE-1');
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it("approve finds the watcher's ledger through the profile that sets its stateDir, as watch does", async () => {
    const state = await tempDirPerTest('htorder-profile-state-');
    const config = join(await tempDirPerTest('htorder-profile-config-'), 'config.yaml');
    const e = fx.env;
    await writeFile(
      config,
      [
        'profiles:',
        '  orders:',
        `    baseUrl: ${e.HTORDER_BASE_URL}`,
        `    authUrl: ${e.HTORDER_AUTH_URL}`,
        `    realm: ${e.HTORDER_REALM}`,
        `    clientId: ${e.HTORDER_CLIENT_ID}`,
        `    clientSecret: ${e.HTORDER_CLIENT_SECRET}`,
        `    stateDir: ${state}`,
        '    maxJobCost: 1',
        '    artworkCheck: "off"',
        '    duplicateWindow: "0"',
        '',
      ].join('\n'),
    );
    await chmod(config, 0o600);
    // No HTORDER_* but the config file's name: the account and the state dir come from the profile.
    const elsewhere = await tempDirPerTest('htorder-xdg-state-');
    const env = { HTORDER_CONFIG: config, HTORDER_PROFILE: 'orders', XDG_STATE_HOME: elsewhere };
    const w = await startWatch({ target: fx.drop.path }, env);
    try {
      await writeFile(join(fx.drop.path, 'prof.yaml'), manifest('PROF', 2));
      await inFolder('held', 'prof.yaml');
      expect(await approvalNotes(state)).toHaveLength(1);
      // The watcher's own environment, no flag; and the profile as a flag, without the variable.
      const ok = await approve({ paths: ['held/prof.yaml'], orders: ['PROF-1'] }, env);
      expect(ok.code, ok.stderr).toBe(0);
      const { HTORDER_PROFILE: _, ...noProfile } = env;
      const flag = await approve(
        { paths: ['held/prof.yaml'], orders: ['PROF-2'], flags: { profile: 'orders' } },
        noProfile,
      );
      expect(flag.code, flag.stderr).toBe(0);
      await inFolder('done', 'prof.yaml');
      expect(await creates()).toBe(2);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });
});
