import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { InputAttempts } from '../../src/watch/attempts.js';
import { tempDirPerTest } from '../support/temp-files.js';

/** The crash counter of watch (poison files); drops-poison.test.ts kills a real watcher with it. */
describe('InputAttempts', () => {
  let dir: string; // removed after each test by tempDirPerTest
  beforeEach(async () => {
    dir = await tempDirPerTest('htorder-attempts-');
  });

  it('counts runs that began without ending, in one file per input, made with its folder at the first run', async () => {
    const state = join(dir, 'attempts'); // not there yet
    const a = new InputAttempts(state, 3);
    const key = a.keyOf('/drop', 'x.yaml', 'ab'.repeat(32));
    expect(await a.begin(key)).toBe(1);
    // A crash leaves the count; the next instance reads it on.
    const b = new InputAttempts(state, 3);
    expect(await b.begin(key)).toBe(2);
    expect(await b.begin(key)).toBe(3);
    expect((await readFile(join(state, `${key}.attempts`), 'utf8')).trim()).toBe('3');
    // Only the count file, no temporary files beside it.
    expect(await readdir(state)).toEqual([`${key}.attempts`]);
    await b.end(key);
    expect(await readdir(state)).toEqual([]);
    await b.end(key); // already gone: fine
    expect(await b.begin(key)).toBe(1);
  });

  it('reads a longer earlier count correctly and starts afresh from anything unreadable', async () => {
    const state = join(dir, 'attempts');
    const a = new InputAttempts(state, 3);
    const key = a.keyOf('/drop', 'y.yaml', 'cd'.repeat(32));
    await a.begin(key);
    await writeFile(join(state, `${key}.attempts`), '10\n');
    expect(await a.begin(key)).toBe(11);
    await writeFile(join(state, `${key}.attempts`), 'garbage that is longer\n');
    expect(await a.begin(key)).toBe(1);
    expect(await readFile(join(state, `${key}.attempts`), 'utf8')).toBe('1\n');
  });
});
