import { spawnSync } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, requireDist } from '../support/dist.js';
import { injectedBug } from '../support/injected-bug.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * An internal error (a bug) exits 70, never 1 (an invalid input) nor any other code an input or
 * the setup can cause, so a scheduler tells a crash from a bad row (docs/commands.md#exit-codes).
 * A real process with a bug put in by `node --import`.
 */

beforeAll(requireDist);

describe('an internal error', () => {
  it.each(['command', 'callback'] as const)(
    'thrown in the %s exits 70 and says what it means',
    async (where) => {
      const dir = await tempDirPerTest('htorder-internal-');
      await copyFile(join(ROOT, 'samples/reorder/asset-reorder.yaml'), join(dir, 'orders.yaml'));
      const bug = await injectedBug(dir, where);
      const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', HOME: dir };
      for (const k of Object.keys(env)) if (k.startsWith('HTORDER_')) delete env[k];
      const r = spawnSync(process.execPath, ['--import', bug, CLI, 'check', '--json', 'orders.yaml'], {
        cwd: dir,
        env,
        encoding: 'utf8',
      });
      expect(r.stderr).toContain('htorder: internal error: Error: an injected bug');
      expect(r.stderr).toContain(
        'what was sent is in the ledger, and a later run never sends it twice; please report it',
      );
      expect(r.status, r.stderr).toBe(70);
    },
    60_000,
  );
});
