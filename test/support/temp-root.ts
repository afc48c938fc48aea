import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's own temporary folder (temp-root.global.ts). */
    tempRoot: string;
  }
}

/**
 * Every test file gets a temporary folder of its own, as TMPDIR, removed with everything in
 * it once the file's tests are done (vitest.config.ts: the first of the setupFiles, so its
 * afterAll runs last, after the servers and watchers the file's own hooks close).
 *
 * os.tmpdir() reads TMPDIR at each call, and processes a test spawns inherit it, so this one
 * hook covers every temporary thing of the file: a test's mkdtemp and the helpers' folders
 * (isolated-home, temp-files, watch-harness, pipeline-harness, s3, chaos), folders
 * htorder makes itself in the temporary folder (a watcher's private copies, the demo's), and
 * a child's leftovers after a kill -9. Tests still remove what they can early (tempDir's
 * remove()), which keeps a long file's disk use small, but nothing depends on it: before
 * this, each `npm test` left about 300 folders in /tmp.
 */
const root = inject('tempRoot');
const mine = mkdtempSync(join(root, 'file-'));
process.env.TMPDIR = mine;

afterAll(() => {
  rmSync(mine, { recursive: true, force: true, maxRetries: 3 });
});
