import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApprove } from '../../src/cli/approve-command.js';
import { runPipelineCommand } from '../../src/cli/run-pipeline.js';
import { heldName, type HeldNote } from '../../src/pipeline/guard-notes.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { CLI, requireDist } from '../support/dist.js';
import { sink } from '../support/sink.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { sandboxWithEnv, waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/** Held inputs in held/, many more than the watcher may open files at once. */
const HELD = 400;
const NOFILE = 128;

let sandbox: Sandbox;
let base: Record<string, string>;
beforeAll(async () => {
  requireDist();
  const started = await sandboxWithEnv('');
  sandbox = started.sandbox;
  base = started.env;
});
afterAll(async () => sandbox?.close());

describe('watch with many held inputs under a low open-file limit', () => {
  it(`a watcher process under ulimit -n ${NOFILE} with ${HELD} held inputs keeps running and takes the approved one back`, async () => {
    const state = await tempDirPerTest('htorder-nofile-state-');
    const drop = await tempDirPerTest('htorder-nofile-drop-');
    const work = await tempDirPerTest('htorder-nofile-work-');
    const env = { ...base, HTORDER_STATE_DIR: state, HTORDER_MAX_JOB_COST: '1', XDG_CONFIG_HOME: work };
    const io = () => ({ stdout: sink().stream, stderr: sink().stream, env, cwd: work });

    // One input held by a run, as a watcher would have held it.
    const real = join(work, 'real.yaml');
    await writeFile(real, manifest('NOFILE', 1));
    expect(await runPipelineCommand({ command: 'run', files: [real], flags: {} }, io())).toBe(4);
    const ledgerDir = join(state, 'ledger', (await readdir(join(state, 'ledger')))[0]!);
    const { account } = JSON.parse(await readFile(join(ledgerDir, '.account'), 'utf8')) as { account: string };
    const ledger = new FolderLedger(state);
    const note = (await readdir(ledgerDir)).find((n) => n.startsWith('.held-'))!;
    const template = JSON.parse(await readFile(join(ledgerDir, note), 'utf8')) as HeldNote;

    // And many more held inputs, each with its own bytes and held note.
    await mkdir(join(drop, 'held'));
    await copyFile(real, join(drop, 'held', 'real.yaml'));
    for (let i = 0; i < HELD; i++) {
      const bytes = `${manifest('NOFILE', 1)}# copy ${i}\n`;
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      await writeFile(join(drop, 'held', `copy-${i}.yaml`), bytes);
      await ledger.writeNote(account, heldName(sha256), { ...template, input: { file: `copy-${i}.yaml`, sha256 } });
    }
    expect(await runApprove({ paths: [join(drop, 'held', 'real.yaml')], flags: {} }, io())).toBe(0);

    const child = spawn('sh', ['-c', `ulimit -n ${NOFILE} && exec "$@"`, 'sh', process.execPath, CLI, 'watch', drop], {
      env: { ...process.env, ...env, HTORDER_SCAN_INTERVAL_MS: '100', HTORDER_STABLE_TIME_MS: '100' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr.on('data', (d) => {
      log += d;
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let code: number | null | undefined;
    void exited.then((c) => {
      code = c;
    });
    try {
      await waitFor(
        () => (existsSync(join(drop, 'done', 'real.yaml')) ? true : code !== undefined ? false : undefined),
        'the approved input in done/',
        25_000,
      );
      expect(code, log.slice(-2000)).toBeUndefined();
      expect(existsSync(join(drop, 'done', 'real.yaml'))).toBe(true);
      expect((await readdir(join(drop, 'held'))).filter((n) => n.endsWith('.yaml'))).toHaveLength(HELD);
      expect(log).not.toContain('EMFILE');
    } finally {
      if (code === undefined) child.kill('SIGTERM');
      expect(await exited, log.slice(-2000)).toBe(0);
    }
  });
});
