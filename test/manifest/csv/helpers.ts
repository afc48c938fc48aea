import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A temp folder for this test file, removed afterwards; `write` puts a file in it. */
export function tempFiles(): { write(name: string, content: string | Uint8Array): Promise<string> } {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  return {
    async write(name, content) {
      dir ??= await mkdtemp(join(tmpdir(), 'htorder-csv-'));
      const path = join(dir, name);
      await writeFile(path, content);
      return path;
    },
  };
}

/** Lines joined with LF and a final newline. */
export const lines = (...ls: string[]): string => ls.join('\n') + '\n';
