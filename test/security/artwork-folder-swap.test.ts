import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, readSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderFileError, openFileInFolder, pinManifestFolder } from '../../src/storage/folder-file.js';
import { sha256Hex } from '../../src/manifest/read-input.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * One who may write a manifest's folder exchanges a folder on the way to an `artwork:` file
 * (or the manifest's folder itself) with a symbolic link to a private folder, back and forth,
 * from a second process, while htorder opens the file again and again. Whatever the timing,
 * nothing outside the folder is ever read: the open descriptor is judged (its real path in
 * /proc, its device and inode), not the name.
 */

const INSIDE = 'INSIDE-ARTWORK';
const SECRET = 'SECRET-OUTSIDE-0600';

/** Exchanges `name` (a folder) and a link to `target` under that name, as fast as it can. */
const SWAPPER = `
const fs = require('node:fs');
const [dir, name, target] = process.argv.slice(1);
const real = dir + '/' + name;
const link = dir + '/.' + name + '-link';
const aside = dir + '/.' + name + '-real';
fs.symlinkSync(target, link);
process.stdout.write('ready\\n');
for (;;) {
  try {
    fs.renameSync(real, aside);
    fs.renameSync(link, real);
    fs.renameSync(real, link);
    fs.renameSync(aside, real);
  } catch {}
}
`;

let swapper: ChildProcess | undefined;
afterEach(async () => {
  if (!swapper) return;
  swapper.kill('SIGKILL');
  await new Promise((r) => swapper?.once('exit', r));
  swapper = undefined;
});

async function swap(dir: string, name: string, target: string): Promise<void> {
  swapper = spawn(process.execPath, ['-e', SWAPPER, dir, name, target], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((r) => swapper?.stdout?.once('data', r));
}

/** A folder with `INSIDE` at designs/tiger.png, and a private folder beside it with the secret at the same names. */
async function layout(): Promise<{ root: string; folder: string; outside: string }> {
  const root = await tempDirPerTest('htorder-artswap-');
  const folder = join(root, 'orders');
  const outside = join(root, 'private');
  for (const d of [join(folder, 'designs'), join(outside, 'designs')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(folder, 'designs', 'tiger.png'), INSIDE);
  writeFileSync(join(outside, 'tiger.png'), SECRET, { mode: 0o600 });
  writeFileSync(join(outside, 'designs', 'tiger.png'), SECRET, { mode: 0o600 });
  return { root, folder, outside };
}

/** Opens and reads the file `tries` times; counts what was read. */
function readMany(open: () => number, tries: number): { inside: number; secret: number; refused: number } {
  const seen = { inside: 0, secret: 0, refused: 0 };
  const buf = Buffer.alloc(64);
  for (let i = 0; i < tries; i++) {
    let fd: number;
    try {
      fd = open();
    } catch (err) {
      if (!(err instanceof FolderFileError)) throw err;
      seen.refused++;
      continue;
    }
    const text = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString();
    closeSync(fd);
    if (text === SECRET) seen.secret++;
    else if (text === INSIDE) seen.inside++;
  }
  return seen;
}

describe('artwork files: a folder swapped for a link by a second process', () => {
  it('a folder on the way (designs/) exchanged with a link: the secret behind it is never read', async () => {
    const { folder, outside } = await layout();
    await swap(folder, 'designs', outside);
    const seen = readMany(() => openFileInFolder(folder, 'designs/tiger.png', 1024, 'the folder').fd, 4000);
    expect(seen.secret).toBe(0);
    // The race was really run: some opens saw the folder, others the link.
    expect(seen.inside).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it("the manifest's folder itself exchanged with a link: pinned where the manifest was read, the secret is never read", async () => {
    const { root, folder, outside } = await layout();
    const manifest = join(folder, 'order.yaml');
    writeFileSync(manifest, 'jobs: []\n');
    const pin = await pinManifestFolder(manifest, sha256Hex(Buffer.from('jobs: []\n')));
    await swap(root, 'orders', outside);
    const seen = readMany(() => openFileInFolder(pin, 'designs/tiger.png', 1024, 'the folder').fd, 4000);
    expect(seen.secret).toBe(0);
    expect(seen.inside).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it('a manifest whose bytes are no longer those read pins no folder: its artwork is not read', async () => {
    const { folder } = await layout();
    const manifest = join(folder, 'order.yaml');
    writeFileSync(manifest, 'jobs: []\n');
    await expect(pinManifestFolder(manifest, sha256Hex(Buffer.from('other')))).rejects.toThrow(FolderFileError);
    // A folder swapped in with a link at the manifest's name pins that folder only if it holds the same bytes.
    renameSync(folder, join(folder, '..', 'moved'));
    symlinkSync(join(folder, '..', 'moved'), folder);
    const pin = await pinManifestFolder(manifest, sha256Hex(Buffer.from('jobs: []\n')));
    expect(pin.path).toBe(join(folder, '..', 'moved'));
  });
});
