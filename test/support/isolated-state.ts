import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach } from 'vitest';

/**
 * htorder's default state dir is per user ($XDG_STATE_HOME/htorder, else ~/.local/state/htorder):
 * tests must never write the ledger of the user running them, nor share one test's ledger with
 * the next. Each test gets a fresh XDG_STATE_HOME, which processes spawned with process.env and
 * in-process runs given process.env inherit (vitest.config.ts: setupFiles). It is made in the
 * test file's own temporary folder, removed after the file (temp-root.ts).
 */
beforeEach(() => {
  process.env.XDG_STATE_HOME = mkdtempSync(join(tmpdir(), 'htorder-test-state-'));
});
