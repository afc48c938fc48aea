import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * A state dir other users may write is refused at start (docs/security.md#state-and-ledgers-one-ledger-per-account-wherever-htorder-runs):
 * whoever may rename entries in it can swap the ledger for a copy of their own holding a forged
 * approval, and the operator's next run sends the held job as approved.
 */

const io = captureStdio();

async function held(): Promise<{ dir: string; order: string }> {
  const dir = await tempDirPerTest();
  const order = join(dir, 'big.yaml');
  const sample = readFileSync(join(ROOT, 'samples/reorder/asset-reorder.yaml'), 'utf8');
  writeFileSync(order, sample.replace('quantity: 50', 'quantity: 500'));
  return { dir, order };
}

describe('a state dir other users may write', () => {
  it('is refused (exit 2), naming it, its mode and the fix, before anything is read or sent', async () => {
    const { dir, order } = await held();
    const state = join(dir, 'shared');
    for (const mode of [0o777, 0o1777]) {
      mkdirSync(state, { recursive: true });
      chmodSync(state, mode);
      for (const args of [
        ['run', '--sandbox', '--max-job-cost', '100', '--state-dir', state, order],
        ['approve', '--sandbox', '--state-dir', state, order],
        ['track', '--sandbox', '--state-dir', state],
      ]) {
        io.err = '';
        expect(await runCli(args), io.err).toBe(2);
        expect(io.err).toContain(
          `the state dir ${state} (--state-dir) may be written by other users (mode ${mode.toString(8).padStart(4, '0')})`,
        );
        expect(io.err).toContain(`chmod o-w ${state}`);
      }
    }
  });

  it('one that cannot be a folder — a file, a file on its way, a link leading nowhere — is refused at start, not on each job', async () => {
    const { dir, order } = await held();
    writeFileSync(join(dir, 'afile'), 'x');
    symlinkSync(join(dir, 'missing', 'state'), join(dir, 'dangling'));
    const cases: [string, string][] = [
      ['afile', 'is not a folder'],
      ['afile/state', 'cannot be used as a folder (ENOTDIR)'],
      ['dangling', 'is a symbolic link to a folder that does not exist'],
    ];
    for (const [name, why] of cases) {
      io.err = '';
      const state = join(dir, name);
      expect(await runCli(['run', '--sandbox', '--state-dir', state, order]), io.err).toBe(2);
      expect(io.err).toContain(`the state dir ${state} (--state-dir) ${why}`);
      expect(io.err).not.toContain('internal error');
    }
  });

  it('a group’s state dir, or one only its user may write, is used', async () => {
    const { dir, order } = await held();
    const state = join(dir, 'team');
    mkdirSync(state);
    chmodSync(state, 0o2775);
    process.env.HTORDER_STATE_DIR = state;
    try {
      expect(await runCli(['run', '--sandbox', '--max-job-cost', '100', order]), io.err).toBe(4);
      expect(await runCli(['approve', '--sandbox', order]), io.err).toBe(0);
      expect(await runCli(['run', '--sandbox', '--max-job-cost', '100', order]), io.err).toBe(0);
    } finally {
      delete process.env.HTORDER_STATE_DIR;
    }
  });
});
