import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
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

  it('gives the new file exactly the mode asked for, whatever the umask takes away, and writes a staged file in place', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'htorder-aw-'));
    // 0664: the usual umask (022) takes the group's write away at the create; it is set again.
    for (const mode of [0o600, 0o644, 0o664]) {
      const target = join(dir, `m${mode.toString(8)}`);
      await writeFileAtomic(target, 'x', { mode });
      expect((await stat(target)).mode & 0o777).toBe(mode);
    }
    // staged: the path itself, created exclusively (no temporary name, no rename over anything).
    const staged = join(dir, '.r.tmp');
    await writeFileAtomic(staged, 'y', { staged: true });
    expect(await readFile(staged, 'utf8')).toBe('y');
    await expect(writeFileAtomic(staged, 'z', { staged: true })).rejects.toThrow(/EEXIST/);
    expect(await readFile(staged, 'utf8')).toBe('y');
  });
});
