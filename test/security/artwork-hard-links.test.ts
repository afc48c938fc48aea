import { chmodSync, chownSync, closeSync, linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  FolderFileError,
  hardLinkRefusal,
  openFileInFolder,
  pinFolder,
  readFileInFolder,
} from '../../src/storage/folder-file.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * A hard link puts any file of the disk under a name in a folder others may write. A file with
 * more than one link is read only when it is the runner's own, not writable by group or others,
 * on a kernel that refuses hard links to files one may not read and write; otherwise it is
 * refused, saying so. And a file the manifest's owner could not read is not read for them.
 */

const ME = process.getuid?.() ?? 0;
const OTHER = ME === 4242 ? 4243 : 4242;
const canChown = ME === 0;

/** The size of a file openFileInFolder lets through (its descriptor closed). */
function sizeOf(...args: Parameters<typeof openFileInFolder>): number {
  const { fd, size } = openFileInFolder(...args);
  closeSync(fd);
  return size;
}

describe('hard-linked files', () => {
  it.each([
    [{ nlink: 1, uid: OTHER, mode: 0o100666 }, true, undefined],
    [{ nlink: 2, uid: ME, mode: 0o100600 }, true, undefined],
    [{ nlink: 2, uid: ME, mode: 0o100644 }, true, undefined],
    [{ nlink: 2, uid: ME, mode: 0o100620 }, true, 'may be written by group or others'],
    [{ nlink: 3, uid: ME, mode: 0o100602 }, true, 'may be written by group or others'],
    [{ nlink: 2, uid: OTHER, mode: 0o100600 }, true, `belongs to another user (uid ${OTHER})`],
    [{ nlink: 2, uid: ME, mode: 0o100600 }, false, 'does not protect hard links'],
  ] as const)('%o (hard links protected: %s) → %s', (st, protectedLinks, why) => {
    const refusal = hardLinkRefusal(st, protectedLinks, ME);
    if (why === undefined) expect(refusal).toBeUndefined();
    else {
      expect(refusal).toContain(why);
      expect(refusal).toContain(`has ${st.nlink} hard links`);
      expect(refusal).toContain('copy the file in instead of linking it');
    }
  });

  it.runIf(canChown)("a hard link to another user's private file is not read, and the message says why", async () => {
    const root = await tempDirPerTest('htorder-hardlink-');
    const folder = join(root, 'orders');
    mkdirSync(folder);
    const secret = join(root, 'their-config.png');
    writeFileSync(secret, 'clientSecret: hunter2', { mode: 0o600 });
    chownSync(secret, OTHER, OTHER);
    linkSync(secret, join(folder, 'tiger.png'));
    const err = (() => {
      try {
        openFileInFolder(folder, 'tiger.png', 1024, 'the folder');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(FolderFileError);
    expect((err as Error).message).toMatch(/^has 2 hard links and belongs to another user/);
    // Mapping lookups share the rule.
    expect(() => readFileInFolder(folder, 'tiger.png')).toThrow(/hard links/);
  });

  it('the runner’s own file hard-linked: read where hard links are protected, refused when group-writable', async () => {
    const folder = await tempDirPerTest('htorder-hardlink-own-');
    const own = join(folder, 'original.png');
    writeFileSync(own, 'PNG', { mode: 0o644 });
    linkSync(own, join(folder, 'copy.png'));
    const protectedHere = hardLinkRefusal({ nlink: 2, uid: ME, mode: 0o100600 }) === undefined;
    if (protectedHere) {
      expect(sizeOf(folder, 'copy.png', 1024, 'the folder')).toBe(3);
    }
    chmodSync(own, 0o664);
    expect(() => openFileInFolder(folder, 'copy.png', 1024, 'the folder')).toThrow(/may be written by group or others/);
  });
});

describe("files the manifest's owner could not read", () => {
  it.runIf(canChown)(
    'are not read for a manifest owned by another user; their own and world-readable ones are',
    async () => {
      const folder = await tempDirPerTest('htorder-reader-');
      writeFileSync(join(folder, 'private.png'), 'PNG', { mode: 0o600 });
      writeFileSync(join(folder, 'public.png'), 'PNG', { mode: 0o644 });
      writeFileSync(join(folder, 'theirs.png'), 'PNG', { mode: 0o600 });
      chownSync(join(folder, 'theirs.png'), OTHER, OTHER);
      const pin = { ...pinFolder(folder), readerUid: OTHER };
      expect(() => openFileInFolder(pin, 'private.png', 1024, 'the folder')).toThrow(
        /belongs to another user \(uid \d+\) and is not readable by everyone/,
      );
      expect(sizeOf(pin, 'public.png', 1024, 'the folder')).toBe(3);
      expect(sizeOf(pin, 'theirs.png', 1024, 'the folder')).toBe(3);
      // The runner's own manifest may name the runner's own files.
      expect(sizeOf({ ...pin, readerUid: ME }, 'private.png', 1024, 'the folder')).toBe(3);
    },
  );
});
