import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/** What htorder and its tests name their temporary folders (htorder-watch-, htorder-state-, …). */
const OURS = /^htorder-/;

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
    // Each file removes its own folder; one left here is a file whose afterAll never ran.
    const unremoved = readdirSync(root);
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    const escaped = readdirSync(system).filter(
      (n) => OURS.test(n) && !before.has(n) && n !== root.slice(system.length + 1),
    );
    const found = [
      ...unremoved.map((n) => `a test file's temporary folder was not removed: ${n}`),
      ...escaped.map((n) => `new in ${system} after the tests: ${n}`),
    ];
    if (found.length === 0) return;
    const message = `Tests left temporary files behind (test/support/temp-root.ts):\n  ${found.join('\n  ')}`;
    if (process.env.CI) {
      console.error(message);
      process.exitCode = 1;
      return;
    }
    console.warn(message);
  };
}
