import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireDist } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * A run takes every order's lock and writes its ledger under it without promise hooks: an
 * AsyncLocalStorage (or any async hook) in the process would make each of its promises pay
 * for them, on the main thread that bounds a run at a fast API.
 */

const exec = promisify(execFile);

beforeAll(requireDist);

/**
 * Loaded before the CLI (`--import`): once the run is done, whether promise hooks are on. Two
 * promise callbacks in a row run under one async id unless they are (node:async_hooks' docs:
 * promise executions get ids of their own only while a hook is enabled).
 */
const PROBE = `
import { executionAsyncId } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
let asked = false;
process.on('beforeExit', () => {
  if (asked) return;
  asked = true;
  const ids = [];
  Promise.resolve()
    .then(() => ids.push(executionAsyncId()))
    .then(() => {
      ids.push(executionAsyncId());
      writeFileSync(process.env.PROBE_OUT, JSON.stringify({ promiseHooks: ids[0] !== ids[1] }));
    });
});
`;

describe('htorder run', () => {
  it('submits its orders under their locks with no promise hooks in the process', async () => {
    const dir = await tempDirPerTest('htorder-hooks-');
    const probe = join(dir, 'probe.mjs');
    const out = join(dir, 'probe.json');
    await writeFile(probe, PROBE);
    await writeFile(join(dir, 'orders.yaml'), manifest('PO-HOOKS', 3));
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', PROBE_OUT: out };
    for (const k of Object.keys(env)) if (k.startsWith('HTORDER_')) delete env[k];
    const run = async (): Promise<{ statuses: string[]; promiseHooks: boolean }> => {
      const { stdout } = await exec(
        process.execPath,
        ['--import', probe, CLI, 'run', '--sandbox', '--json', 'orders.yaml'],
        { cwd: dir, env },
      );
      const summary = JSON.parse(stdout) as { inputs: { jobs: { status: string }[] }[] };
      const { promiseHooks } = JSON.parse(await readFile(out, 'utf8')) as { promiseHooks: boolean };
      return { statuses: summary.inputs[0]!.jobs.map((j) => j.status), promiseHooks };
    };
    expect(await run()).toEqual({ statuses: Array(3).fill('submitted'), promiseHooks: false });
    // Again: each order read under its lock and found submitted.
    expect(await run()).toEqual({ statuses: Array(3).fill('already-submitted'), promiseHooks: false });
  }, 60_000);
});
