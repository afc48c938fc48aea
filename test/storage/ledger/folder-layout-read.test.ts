import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readJson, readText } from '../../../src/storage/ledger/folder-layout.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/** What a read gives, or the code it fails with. */
async function outcome<T>(read: Promise<T>): Promise<{ value: T } | { code: unknown }> {
  try {
    return { value: await read };
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code ?? (err as Error).name };
  }
}

describe('the folder ledger reads a file on this thread as it does on the pool', () => {
  it('gives the same text, JSON, absence or failure for any file', async () => {
    const dir = await tempDirPerTest('htorder-layout-');
    let n = 0;
    const file = fc.oneof(
      fc.record({ kind: fc.constant('text' as const), text: fc.string({ unit: 'binary', maxLength: 3000 }) }),
      fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue() }),
      fc.constant({ kind: 'missing' as const }),
      fc.constant({ kind: 'folder' as const }),
    );
    await fc.assert(
      fc.asyncProperty(file, async (f) => {
        const path = join(dir, `f${n++}`);
        if (f.kind === 'text') await writeFile(path, f.text);
        if (f.kind === 'json') await writeFile(path, JSON.stringify(f.value));
        if (f.kind === 'folder') await mkdir(path);
        for (const read of [readText, readJson]) {
          const here = await outcome(read(path, true));
          expect(here).toEqual(await outcome(read(path, false)));
        }
      }),
      { numRuns: 120 },
    );
  });

  it('reads nothing as none, and a folder as a failure, either way', async () => {
    const dir = await tempDirPerTest('htorder-layout-');
    for (const onThisThread of [true, false]) {
      expect(await readText(join(dir, 'none'), onThisThread)).toBe('');
      expect(await readJson(join(dir, 'none'), onThisThread)).toBeUndefined();
      await expect(readJson(dir, onThisThread)).rejects.toMatchObject({ code: 'EISDIR' });
    }
  });
});
