import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { utimes, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { temporaryName } from '../../../src/storage/atomic-write.js';
import { MAX_INPUT_NAME_BYTES, shortName } from '../../../src/watch/sources/drop-names.js';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';
import { tempDir } from '../../support/temp-files.js';

/** watch writes an input's reports into done/ or failed/: a write of them killed midway leaves temporaries there. */

const HOUR = 3_600_000;
let dir: Awaited<ReturnType<typeof tempDir>>;
let source: FolderSource;
beforeEach(async () => {
  dir = await tempDir('htorder-report-strays-');
  source = new FolderSource(dir.path, { leaseMs: 60_000 });
  await source.init();
});
afterEach(async () => {
  await source.close();
  await dir.remove();
});

const deadPid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

async function plant(path: string, pid: number, ageMs: number): Promise<string> {
  const tmp = temporaryName(path).replace(`.${process.pid}.`, `.${pid}.`);
  await writeFile(tmp, 'torn');
  const at = new Date(Date.now() - ageMs);
  await utimes(tmp, at, at);
  return tmp;
}

describe('a watched folder’s report temporaries', () => {
  it.each(['done', 'failed'] as const)(
    'finishing an input into %s/ removes the stale ones of its report names there, and only those',
    async (outcome) => {
      const dead = deadPid();
      const into = (name: string) => join(dir.path, outcome, name);
      // Planted after init: starting a watcher sweeps old temporaries of any name already.
      const stray = await Promise.all(
        ['result.json', 'result.csv', 'errors.txt'].map((r) => plant(into(`a.yaml.${r}`), dead, 2 * HOUR)),
      );
      const kept = [
        await plant(into('b.yaml.result.json'), dead, 2 * HOUR),
        await plant(into('a.yaml.result.csv'), dead, 10 * 60_000),
        await plant(into('a.yaml.errors.txt'), process.ppid, 2 * HOUR),
      ];
      await writeFile(join(dir.path, 'a.yaml'), 'version: 1\n');
      const claim = (await source.claim('a.yaml'))!;
      const final = await claim.finish(outcome, async (to) => {
        await writeFile(to.paths.errors, 'why\n');
        return { errors: to.paths.errors };
      });
      expect(final).toBe(into('a.yaml'));
      for (const path of stray) expect(existsSync(path), basename(path)).toBe(false);
      for (const path of kept) expect(existsSync(path), basename(path)).toBe(true);
    },
  );

  it('setting a too-long name aside into failed/ removes the stale ones of its short name’s errors.txt', async () => {
    const long = `${'l'.repeat(MAX_INPUT_NAME_BYTES)}.csv`;
    const short = shortName(long, createHash('sha256').update(long).digest('hex'));
    const stray = await plant(join(dir.path, 'failed', `${short}.errors.txt`), deadPid(), 2 * HOUR);
    await writeFile(join(dir.path, long), 'x');
    expect(await source.claim(long)).toBeUndefined();
    expect(existsSync(join(dir.path, 'failed', `${short}.errors.txt`))).toBe(true);
    expect(existsSync(stray)).toBe(false);
  });
});
