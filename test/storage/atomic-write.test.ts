import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/storage/atomic-write.js';

describe('writeFileAtomic', () => {
  it('replaces the file and leaves no temp file behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'htorder-aw-'));
    const target = join(dir, 'x.result.json');
    await writeFileAtomic(target, 'one');
    await writeFileAtomic(target, 'two');
    expect(await readFile(target, 'utf8')).toBe('two');
    expect(await readdir(dir)).toEqual(['x.result.json']);
  });

  it('fails loudly when the directory does not exist, creating nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'htorder-aw-'));
    await expect(writeFileAtomic(join(dir, 'missing', 'x'), 'y')).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual([]);
  });
});
