import { mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HeldFolder } from '../../src/storage/held-folder.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
const temp = async (): Promise<string> => {
  const d = await mkdtemp(join(tmpdir(), 'htorder-held-'));
  dirs.push(d);
  return d;
};

describe('HeldFolder', () => {
  it('refuses a link or a file at the name', async () => {
    const root = await temp();
    await symlink(root, join(root, 'link'));
    await writeFile(join(root, 'file'), '');
    expect(await HeldFolder.open(join(root, 'link'))).toBeUndefined();
    expect(await HeldFolder.open(join(root, 'file'))).toBeUndefined();
  });

  it("make: says what is at the name when it is not a folder, instead of mkdir's error", async () => {
    const root = await temp();
    await writeFile(join(root, 'file'), '');
    await symlink(join(root, 'file'), join(root, 'link-to-file'));
    await symlink(join(root, 'nowhere'), join(root, 'dangling'));
    await symlink(root, join(root, 'link-to-folder'));
    expect(await HeldFolder.make(join(root, 'file'))).toBe('is not a folder');
    for (const link of ['link-to-file', 'dangling', 'link-to-folder'])
      expect(await HeldFolder.make(join(root, link)), link).toMatch(/^is a symbolic link;/);
    const made = await HeldFolder.make(join(root, 'new', 'sub'));
    expect(made).toBeInstanceOf(HeldFolder);
    await (made as HeldFolder).close();
    // Under a file, nothing is at the name to describe: mkdir's own error.
    await expect(HeldFolder.make(join(root, 'file', 'sub'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('sees its name swapped with a link, and still writes into the folder it holds', async () => {
    const root = await temp();
    const outside = await temp();
    await mkdir(join(root, 'done'));
    const held = await HeldFolder.open(join(root, 'done'));
    expect(held).toBeDefined();
    try {
      expect(await held!.intact()).toBe(true);
      await rename(join(root, 'done'), join(root, 'aside'));
      await symlink(outside, join(root, 'done'));
      expect(await held!.intact()).toBe(false);
      await writeFile(held!.at('x.txt'), 'x', { flag: 'wx' });
      if (held!.at('x.txt').startsWith('/proc/')) {
        expect(await readdir(join(root, 'aside'))).toEqual(['x.txt']);
        expect(await readdir(outside)).toEqual([]);
      }
    } finally {
      await held!.close();
    }
  });
});
