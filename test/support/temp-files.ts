import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';

/** A fresh folder under the OS temp folder: the test file's own (temp-root.ts), removed after the file at the latest. */
export async function tempDir(prefix = 'htorder-test-'): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Folders made by tempDirPerTest(), removed after each test of the file that made them. */
const perTest: { remove(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(perTest.splice(0).map((d) => d.remove()));
});

/** A fresh temp folder, removed after the current test. */
export async function tempDirPerTest(prefix = 'htorder-manifest-'): Promise<string> {
  const dir = await tempDir(prefix);
  perTest.push(dir);
  return dir.path;
}

/** A temp folder for this test file, removed afterwards; `write` puts a file in it. */
export function tempFiles(prefix = 'htorder-csv-'): {
  write(name: string, content: string | Uint8Array): Promise<string>;
} {
  let dir: Promise<{ path: string; remove(): Promise<void> }> | undefined;
  afterAll(async () => {
    if (dir !== undefined) await (await dir).remove();
  });
  return {
    async write(name, content) {
      dir ??= tempDir(prefix);
      const path = join((await dir).path, name);
      await writeFile(path, content);
      return path;
    },
  };
}

/** Lines joined with LF and a final newline. */
export const lines = (...ls: string[]): string => ls.join('\n') + '\n';

/** Hidden files beside `file` named after it: temporaries (storage/atomic-write.ts temporaryName). */
async function temporariesBeside(file: string): Promise<string[]> {
  return (await readdir(dirname(file))).filter((name) => name.startsWith(`.${basename(file)}`));
}

/**
 * That no temporary is left beside `file`, once those on their way out are gone: a windowed
 * read's findings file is removed as the read is let go, without waiting for it
 * (SpilledFindings.close), so on a loaded machine it may outlive the command by a moment. One
 * still there after 5 s is left behind.
 */
export async function expectNoTemporariesBeside(file: string): Promise<void> {
  await expect.poll(() => temporariesBeside(file), { timeout: 5000, interval: 20 }).toEqual([]);
}
