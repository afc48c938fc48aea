import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/manifest/read-input.js';
import { InputArtworkFiles } from '../../src/pipeline/stages/artwork-files.js';
import { FolderFileError } from '../../src/storage/folder-file.js';
import { tempDirPerTest } from '../support/temp-files.js';

describe("an input's artwork files", () => {
  it('an input taken from a bucket has no folder: its artwork files are refused, saying what to give instead', async () => {
    const files = new InputArtworkFiles({ file: '/work/copy/a.yaml', sha256: '' }, 'none', 1024);
    await expect(files.folder()).rejects.toThrow(FolderFileError);
    await expect(files.folder()).rejects.toThrow('give externalArtworkUrl');
  });

  it("run: the manifest's own folder, pinned once", async () => {
    const folder = await tempDirPerTest('htorder-input-art-');
    const file = join(folder, 'a.yaml');
    writeFileSync(file, 'jobs: []\n');
    const files = new InputArtworkFiles({ file, sha256: sha256Hex(Buffer.from('jobs: []\n')) }, 'manifest', 1024);
    const pin = await files.folder();
    expect(pin.path).toBe(folder);
    expect(await files.folder()).toBe(pin);
  });

  it('counts each file once against the cap, by identity', () => {
    const files = new InputArtworkFiles({ file: 'a.yaml', sha256: '' }, 'none', 1000);
    expect(files.admit('1:1', 600)).toBeUndefined();
    expect(files.admit('1:1', 600)).toBeUndefined();
    expect(files.admit('1:2', 300)).toBeUndefined();
    expect(files.admit('1:3', 200)).toMatch(/to 1100 bytes, over the 1000-byte limit \(setting artworkMaxInputBytes\)/);
    expect(files.admit('1:4', 100)).toBeUndefined();
  });
});
