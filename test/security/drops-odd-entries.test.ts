import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * Finding 10 of issue 13: many files and odd entries. One watch on the folder, not one per
 * entry; a file still growing behind its `.done` marker cannot pin the watcher; folders
 * named like inputs or markers are skipped and never leave an input stuck.
 */

let sandbox: Sandbox;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  state = await tempDir('htorder-odd-state-');
  ({ sandbox, env } = await sandboxWithEnv(state.path));
});
afterAll(async () => {
  await sandbox.close();
  await state.remove();
});

const list = async (dir: string): Promise<string[]> => (await readdir(dir).catch(() => [] as string[])).sort();

/** inotify watches held by this process (Linux: one `inotify wd:` line per watch in fdinfo). */
async function inotifyWatches(): Promise<number> {
  let n = 0;
  for (const fd of await readdir('/proc/self/fdinfo')) {
    const text = await readFile(join('/proc/self/fdinfo', fd), 'utf8').catch(() => '');
    n += text.split('\n').filter((l) => l.startsWith('inotify wd:')).length;
  }
  return n;
}

describe('drop folder: many files and odd entries', () => {
  it.runIf(existsSync('/proc/self/fdinfo'))(
    'watches the folder with one watch however many files it holds',
    async () => {
      const drop = await tempDir('htorder-odd-many-');
      const names = Array.from({ length: 20_000 }, (_, i) => `upload-${i}.part`);
      for (let i = 0; i < names.length; i += 500) {
        await Promise.all(names.slice(i, i + 500).map((n) => writeFile(join(drop.path, n), '')));
      }
      const before = await inotifyWatches();
      const watch = await startWatch({ target: drop.path, flags: { fsEvents: true } }, env);
      try {
        await writeFile(join(drop.path, 'many.yaml'), manifest('MANY', 1));
        await waitFor(
          async () => ((await list(join(drop.path, 'done'))).includes('many.yaml') ? true : undefined),
          'many.yaml done',
          40_000,
        );
        const added = (await inotifyWatches()) - before;
        console.log(`inotify watches for a folder of ${names.length} temporary files: ${added}`);
        expect(added).toBeLessThanOrEqual(2);
      } finally {
        await watch.stop();
        await drop.remove();
      }
    },
    60_000,
  );

  it('skips folders named like inputs or markers with a log line and never strands an input', async () => {
    const drop = await tempDir('htorder-odd-dirs-');
    await mkdir(join(drop.path, 'a.yaml'));
    await mkdir(join(drop.path, 'b.yaml.done'));
    await writeFile(join(drop.path, 'b.yaml'), manifest('ODD-B', 1));
    const watch = await startWatch({ target: drop.path, flags: { fsEvents: false } }, env);
    try {
      await waitFor(
        async () => ((await list(join(drop.path, 'done'))).includes('b.yaml') ? true : undefined),
        'b.yaml done',
      );
      // The claim file goes just after the input is moved into done/ (flaky under load when
      // looked at in between): a stop waits for the input in flight to be finished.
      expect(await watch.stop()).toBe(0);
      expect(await list(join(drop.path, 'processing'))).toEqual([]);
      expect(await list(drop.path)).toEqual([
        '.htorder-ledger',
        'a.yaml',
        'b.yaml.done',
        'done',
        'failed',
        'held',
        'processing',
      ]);
      expect(watch.logs().some((l) => l.name === 'a.yaml' && String(l.msg).includes('not a regular file'))).toBe(true);
    } finally {
      await watch.stop();
      await drop.remove();
    }
  }, 30_000);

  it('does not let a file that keeps growing behind its .done marker pin the watcher', async () => {
    const drop = await tempDir('htorder-odd-grow-');
    const grow = join(drop.path, 'grow.csv');
    await writeFile(grow, 'orderNumber,sku,quantity\n');
    // A second process keeps appending through one open descriptor (it follows the file wherever it is moved).
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs'); const fd = fs.openSync(process.argv[1], 'a');
         setInterval(() => { for (let i = 0; i < 50; i++) fs.writeSync(fd, 'G-' + Date.now() + ',SKU,1\\n'); }, 1);`,
        grow,
      ],
      { stdio: 'ignore' },
    );
    try {
      await waitFor(async () => ((await readFile(grow)).length > 70_000 ? true : undefined), 'the file to grow');
      await writeFile(`${grow}.done`, '');
      const watch = await startWatch(
        { target: drop.path, flags: { fsEvents: false } },
        { ...env, HTORDER_WATCH_MAX_INPUT_BYTES: '65536' },
      );
      try {
        const failed = join(drop.path, 'failed');
        await waitFor(
          async () => ((await list(failed)).includes('grow.csv.errors.txt') ? true : undefined),
          'grow.csv set aside',
        );
        expect(await readFile(join(failed, 'grow.csv.errors.txt'), 'utf8')).toMatch(
          /over the 65536-byte limit|changed while it was read/,
        );
        await writeFile(join(drop.path, 'after.yaml'), manifest('AFTER-GROW', 1));
        await waitFor(
          async () => ((await list(join(drop.path, 'done'))).includes('after.yaml') ? true : undefined),
          'after.yaml done',
        );
      } finally {
        await watch.stop();
      }
    } finally {
      writer.kill('SIGKILL');
      await new Promise((r) => writer.once('exit', r));
      await drop.remove();
    }
  }, 30_000);
});
