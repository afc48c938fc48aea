import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach } from 'vitest';

/**
 * htorder's default state dir is per user ($XDG_STATE_HOME/htorder, else ~/.local/state/htorder):
 * tests must never write the ledger of the user running them, nor share one test's ledger with
 * the next. Each test gets a fresh XDG_STATE_HOME, which processes spawned with process.env and
 * in-process runs given process.env inherit (vitest.config.ts: setupFiles).
 */
const made: string[] = [];
beforeEach(() => {
  const dir = mkdtempSync(join(tmpdir(), 'htorder-test-state-'));
  made.push(dir);
  process.env.XDG_STATE_HOME = dir;
});
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
