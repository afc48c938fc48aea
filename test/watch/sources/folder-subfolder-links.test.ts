import { chmod, mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';

/**
 * Regression (found by the security suite, issue 7): a drop folder whose done/, failed/ or
 * processing/ was pre-created as a symbolic link to elsewhere made the watcher move inputs
 * and write reports outside the drop folder (mkdir -p accepts an existing link).
 */

const dirs: string[] = [];
const temp = async (p: string) => {
  const d = await mkdtemp(join(tmpdir(), p));
  dirs.push(d);
  return d;
};
/** Every instance a test made, closed after it: an instance keeps its lease token open until close(). */
const made: FolderSource[] = [];
const folderSource = (...args: ConstructorParameters<typeof FolderSource>): FolderSource => {
  const s = new FolderSource(...args);
  made.push(s);
  return s;
};
afterEach(async () => {
  await Promise.all(made.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('FolderSource sub-folders', () => {
  it.each(['processing', 'done', 'failed', 'held'])('refuses to start when %s/ is a symbolic link', async (sub) => {
    const drop = await temp('htorder-drop-');
    const outside = await temp('htorder-outside-');
    await symlink(outside, join(drop, sub));
    await expect(folderSource(drop).init()).rejects.toMatchObject({
      name: 'SourceError',
      kind: 'usage',
      message: expect.stringMatching(/symbolic link/),
    });
  });

  it.each(['processing', 'done', 'failed', 'held'])('refuses to start when %s/ is a file, naming it', async (sub) => {
    const drop = await temp('htorder-drop-');
    await writeFile(join(drop, sub), 'not a folder\n');
    await expect(folderSource(drop).init()).rejects.toMatchObject({
      name: 'SourceError',
      kind: 'usage',
      message: `the ${sub} folder ${join(drop, sub)} is not a folder`,
    });
  });

  it('refuses to finish into done/ replaced by a link after start, leaving the input in processing/', async () => {
    const drop = await temp('htorder-drop-');
    const outside = await temp('htorder-outside-');
    const source = folderSource(drop);
    await source.init();
    await writeFile(join(drop, 'a.yaml'), 'version: 1\n');
    const claimed = await source.claim('a.yaml');
    expect(claimed).toBeDefined();
    await rm(join(drop, 'done'), { recursive: true });
    await symlink(outside, join(drop, 'done'));
    await expect(claimed!.finish('done')).rejects.toMatchObject({ name: 'SourceError' });
    expect(await readdir(outside)).toEqual([]);
    expect(await readdir(join(drop, 'processing'))).toContain('a.yaml');
  });

  it('held/: an input finished there is listed and taken back to the top; held/ swapped with a link is refused', async () => {
    const drop = await temp('htorder-drop-');
    const outside = await temp('htorder-outside-');
    const source = folderSource(drop);
    await source.init();
    await writeFile(join(drop, 'a.yaml'), 'version: 1\n');
    const claimed = await source.claim('a.yaml');
    await claimed!.finish('held');
    expect(await source.listHeld()).toEqual(['a.yaml']);
    expect(await source.heldHash('a.yaml')).toMatch(/^[0-9a-f]{64}$/);
    expect(await source.takeBack('a.yaml')).toBe(join(drop, 'a.yaml'));
    expect(await readdir(join(drop, 'held'))).toEqual([]);

    const again = await source.claim('a.yaml');
    await again!.finish('held');
    await rename(join(drop, 'held'), join(drop, 'held-old'));
    await symlink(outside, join(drop, 'held'));
    await writeFile(join(outside, 'b.yaml'), 'version: 1\n');
    await expect(source.listHeld()).rejects.toMatchObject({ name: 'SourceError' });
    await expect(source.takeBack('b.yaml')).rejects.toMatchObject({ name: 'SourceError' });
    expect(await readdir(drop)).not.toContain('b.yaml');
    expect(await readdir(outside)).toEqual(['b.yaml']);
  });

  it.each([0o777, 0o775, 0o2775, 0o757])(
    'refuses a drop folder of mode %o (others may write it, not sticky), naming chmod +t',
    async (mode) => {
      const drop = await temp('htorder-drop-');
      await chmod(drop, mode);
      await expect(folderSource(drop).init()).rejects.toMatchObject({
        name: 'SourceError',
        kind: 'usage',
        message: expect.stringContaining(`chmod +t ${drop}`),
      });
      expect(await readdir(drop)).toEqual([]);
    },
  );

  it.each([0o1777, 0o3775, 0o755, 0o700])('takes a drop folder of mode %o', async (mode) => {
    const drop = await temp('htorder-drop-');
    await chmod(drop, mode);
    await expect(folderSource(drop).init()).resolves.toBeUndefined();
  });

  it('a real folder is fine (control)', async () => {
    const drop = await temp('htorder-drop-');
    await mkdir(join(drop, 'done'));
    await expect(folderSource(drop).init()).resolves.toBeUndefined();
  });
});

describe('FolderSource finish after losing the claim', () => {
  // Regression (found by the chaos suite): an instance whose lease ran out during a stall
  // finished an input that another instance had taken over, so both moved it to done/.
  it('does not move anything once the claim file names another owner', async () => {
    const drop = await temp('htorder-drop-');
    const a = folderSource(drop, { leaseMs: 60_000 });
    await a.init();
    await writeFile(join(drop, 'a.yaml'), 'version: 1\n');
    const claimed = await a.claim('a.yaml');
    // Another instance took the claim over (as takeOverStale does after the lease ran out: our
    // claim name moved aside, its own made in its place).
    await rm(join(drop, 'processing', '.a.yaml.claim'));
    await writeFile(
      join(drop, 'processing', '.a.yaml.claim'),
      JSON.stringify({ owner: 'other:1:x', host: 'other', pid: 1, until: new Date(Date.now() + 60_000).toISOString() }),
    );
    await expect(claimed!.finish('done')).rejects.toMatchObject({ name: 'ClaimLostError' });
    expect(await readdir(join(drop, 'done'))).toEqual([]);
    expect(await readdir(join(drop, 'processing'))).toContain('a.yaml');
  });
});
