import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The private folder (0700, this process's own, made with mkdtemp) where a source keeps the
 * local copies of the inputs it claimed, inside `workDir` — the state directory's `work/` in
 * `watch`, so copies of customers' orders stay beside the state they belong to, not in a
 * shared temporary folder — or the system's temporary folder when none is given.
 */
export async function makeWorkFolder(workDir: string | undefined): Promise<string> {
  const root = workDir ?? tmpdir();
  await mkdir(root, { recursive: true, mode: 0o700 });
  return mkdtemp(join(root, 'htorder-watch-'));
}

/** The work folder `init()` made; claiming before it is a programming error, never the shared temporary folder. */
export function initialised(work: string | undefined): string {
  if (work === undefined) throw new Error('the drop source was not initialised (init() makes its work folder)');
  return work;
}
