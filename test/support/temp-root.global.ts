import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/** What htorder and its tests name their temporary folders (htorder-watch-, htorder-state-, …). */
const OURS = /^htorder-/;
/** A run's own folder (below): another run's, never anything this run's tests make. */
const RUN_ROOT = /^htorder-vitest-/;

/**
 * The run's temporary folder, under which each test file gets its own TMPDIR (temp-root.ts),
 * and the check that nothing of the run escaped into the system's temporary folder: a child
 * spawned with an environment that drops TMPDIR, or a path written as /tmp.
 *
 * An htorder-* entry new in the system's temporary folder after the run fails the run on CI
 * (CI set, as every CI service sets it), where the machine runs this suite alone; elsewhere it
 * is a warning, because on a shared machine another checkout's tests or a benchmark create the
 * same names at the same time, and a red run for another process's folder would be a flake.
 */
export default function setup(project: TestProject): () => void {
  const system = tmpdir();
  const before = new Set(readdirSync(system).filter((n) => OURS.test(n)));
  const root = mkdtempSync(join(system, 'htorder-vitest-'));
  project.provide('tempRoot', root);
  return () => {
    // Each file removes its own folder after its tests; what is left (`vitest list` collects
    // files without running their hooks; a worker that died) goes with the run's folder.
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    const found = readdirSync(system).filter((n) => OURS.test(n) && !RUN_ROOT.test(n) && !before.has(n));
    if (found.length === 0) return;
    const message =
      `New in ${system} after the tests (test/support/temp-root.ts; or another process's, if ` +
      `other tests or a benchmark ran meanwhile):\n  ${found.join('\n  ')}`;
    if (process.env.CI) {
      console.error(message);
      process.exitCode = 1;
      return;
    }
    console.warn(message);
  };
}
