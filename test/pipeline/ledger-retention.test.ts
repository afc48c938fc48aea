import { execFile } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openApiSession } from '../../src/app/api-session.js';
import { pipelineOver } from '../../src/app/pipeline-context.js';
import type { Clock } from '../../src/core/clock.js';
import { processInput } from '../../src/pipeline/process-input.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { safeName } from '../../src/storage/ledger/safe-name.js';
import { CLI, requireDist } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { ADDRESS, ITEMS } from '../support/yaml-manifests.js';

/**
 * The ledger lasts (docs/reliability.md#how-long-the-ledger-keeps-what): its daily upkeep folds
 * orders past `ledgerRetention` and removes expired content notes, and an old file run again
 * is still already-submitted — night after night on the injected calendar clock; and a state
 * dir written by the flat layout of earlier versions keeps working.
 */

const DAY = 86_400_000;
const NIGHT_1 = Date.parse('2026-11-27T02:00:00Z');

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

function handClock(at: number): Clock & { at: number } {
  return {
    at,
    now() {
      return this.at;
    },
  };
}

/** `n` asset reorders `${prefix}-1…n` at one address, of `quantity`, `quantity + 1`… (each its own content). */
const orders = (prefix: string, n: number, quantity = 10) =>
  `version: 1\njobs:\n${Array.from(
    { length: n },
    (_, i) =>
      `  - orderNumber: ${prefix}-${i + 1}\n${ADDRESS}    items:\n${ITEMS.reorder.replace('quantity: 50', `quantity: ${quantity + i}`)}`,
  ).join('')}`;

/** `run` of one input, then the upkeep a run does after its inputs, on `clock`. */
async function runAt(clock: Clock, file: string) {
  const env = { ...h.env(), HTORDER_DUPLICATE_WINDOW: '12h' };
  const session = await openApiSession({ flags: {}, env, cwd: h.workDir, stderr: sink().stream });
  const pipeline = pipelineOver(
    { ...session, clock },
    { command: 'run', cwd: h.workDir, env },
    new FolderLedger(h.stateDir),
  );
  try {
    const outcome = await processInput(file, await pipeline.context());
    await pipeline.upkeep();
    return outcome.report!;
  } finally {
    await pipeline.close();
  }
}

const files = async (dir: string): Promise<string[]> =>
  (await readdir(dir, { recursive: true })).map((p) => p.split('/').pop() as string);

describe('the ledger over many nights', () => {
  it('folds orders past the retention and drops old content notes; an old file run again is already-submitted', async () => {
    const clock = handClock(NIGHT_1);
    const file = await h.write('night-1.yaml', orders('R', 3));
    const first = await runAt(clock, file);
    expect(first.jobs.map((j) => j.status)).toEqual(['submitted', 'submitted', 'submitted']);
    const jobNumbers = first.jobs.map((j) => j.jobNumber);
    const ledgerDir = join(h.stateDir, 'ledger');
    expect((await files(ledgerDir)).filter((n) => n.startsWith('.content-'))).toHaveLength(3);

    // The next night: a day later, nothing is past anything yet (the window is 12h, plus a day).
    clock.at += DAY;
    await runAt(clock, await h.write('night-2.yaml', orders('S', 1, 50)));
    expect((await files(ledgerDir)).filter((n) => n.startsWith('.content-'))).toHaveLength(4);
    expect((await files(ledgerDir)).filter((n) => n === '.folded')).toHaveLength(0);

    // A hundred nights on: past the 90 days of ledgerRetention, the first night's orders fold.
    clock.at += 100 * DAY;
    await runAt(clock, await h.write('night-101.yaml', orders('T', 1, 70)));
    const names = await files(ledgerDir);
    expect(names.filter((n) => n.startsWith('.content-'))).toHaveLength(1);
    expect(names.filter((n) => /^[RS]-\d-[0-9a-f]{16}\.json$/.test(n))).toEqual([]);
    expect(names.filter((n) => n === '.folded').length).toBeGreaterThanOrEqual(1);

    // The first night's file, run again: already submitted, the same jobs, nothing created.
    const before = (await h.sandbox.admin.jobs()).length;
    const again = await runAt(clock, file);
    expect(again.jobs.map((j) => [j.status, j.jobNumber])).toEqual(jobNumbers.map((n) => ['already-submitted', n]));
    expect(await h.sandbox.admin.jobs()).toHaveLength(before);
    // A changed entry of an old order is still told, and not sent.
    const changed = await h.write('night-1.yaml', orders('R', 3).replace('quantity: 12', 'quantity: 99'));
    const refused = await runAt(clock, changed);
    expect(refused.jobs.map((j) => j.status)).toEqual(Array(3).fill('already-submitted'));
    expect(JSON.stringify(refused.jobs[0])).not.toContain('ledger.changed-after-submit');
    expect(JSON.stringify(refused.jobs[2])).toContain('ledger.changed-after-submit');
    expect(await h.sandbox.admin.jobs()).toHaveLength(before);
  });
});

describe('a state dir of the flat layout (htorder before the shards)', () => {
  beforeAll(requireDist);
  const exec = promisify(execFile);
  const FIXTURE = fileURLToPath(new URL('../storage/ledger/flat-layout', import.meta.url));

  it('keeps working: its orders are already submitted, and its first run moves it into shards', async () => {
    const dir = await tempDirPerTest('htorder-flat-');
    cpSync(FIXTURE, dir, { recursive: true });
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', HTORDER_STATE_DIR: join(dir, 'state') };
    for (const k of Object.keys(env)) if (k.startsWith('HTORDER_') && k !== 'HTORDER_STATE_DIR') delete env[k];
    const run = async () => {
      const { stdout } = await exec(process.execPath, [CLI, 'run', '--sandbox', '--json', 'orders.yaml'], {
        cwd: dir,
        env,
      });
      return (JSON.parse(stdout) as { inputs: { jobs: { status: string; jobNumber: number }[] }[] }).inputs[0]!.jobs;
    };
    const account = join(dir, 'state', 'ledger', safeName('sandbox/us-demo'));
    expect(existsSync(join(account, '.layout'))).toBe(false);
    const jobs = await run();
    expect(jobs.map((j) => [j.status, j.jobNumber])).toEqual([
      ['already-submitted', 700001],
      ['already-submitted', 700002],
      ['already-submitted', 700003],
    ]);
    // The run's upkeep moved the flat entries and content notes into shards.
    expect(readdirSync(account).filter((n) => n.endsWith('.json') || n.startsWith('.content-'))).toEqual([]);
    expect(JSON.parse(readFileSync(join(account, '.layout'), 'utf8'))).toMatchObject({ layout: 2 });
    expect((await run()).map((j) => j.status)).toEqual(Array(3).fill('already-submitted'));
    // Nothing was created: the sandbox kept its three jobs.
    const state = JSON.parse(readFileSync(join(dir, 'state', 'sandbox', 'state.json'), 'utf8')) as {
      created: unknown[];
    };
    expect(state.created).toHaveLength(3);
  }, 60_000);
});
