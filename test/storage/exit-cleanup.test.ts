import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIST, requireDist } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * A process's temporary files (a report's spool beside its input, `--json`'s rows in the temp
 * folder) go however it ends: when it exits without closing them, and when a signal nobody
 * listens to kills it, which skips `'exit'` (core/exit-cleanup.ts). A real process, killed for real.
 */
const holder = (folder: string, exitWith: 'signal' | 'exit') => `
  import { SpoolFile } from ${JSON.stringify(join(DIST, 'storage/spool-file.js'))};
  import { JsonJobRows } from ${JSON.stringify(join(DIST, 'cli/json-job-rows.js'))};
  const spool = await SpoolFile.create(${JSON.stringify(join(folder, 'orders.csv'))});
  await spool.write(Buffer.from('spooled'), 0);
  await JsonJobRows.open();
  const { readdirSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const alive = setInterval(() => {}, 1000);
  // What was made, seen by the holder itself (one that exits at once is tidy before anyone else looks).
  const made = { beside: readdirSync(${JSON.stringify(folder)}).length, inTmp: readdirSync(tmpdir()).length };
  process.stdout.write(JSON.stringify(made) + '\\n');
  if (${JSON.stringify(exitWith)} === 'exit') process.exit(3);`;

async function leftovers(exitWith: 'signal' | 'exit') {
  const folder = await tempDirPerTest('htorder-exit-');
  const tmp = await tempDirPerTest('htorder-exit-tmp-');
  const child = spawn(process.execPath, ['--input-type=module', '-e', holder(folder, exitWith)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: tmp },
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const made = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(String(d)));
    child.once('exit', () => reject(new Error(`the holder ended early: ${err}`)));
  });
  // Both were made: the spool beside the input, the rows' folder in the temp folder.
  expect(JSON.parse(made)).toEqual({ beside: 1, inTmp: 1 });
  if (exitWith === 'signal') child.kill('SIGTERM');
  return { ended: await exited, beside: await readdir(folder), inTmp: await readdir(tmp) };
}

beforeAll(() => requireDist());

describe('temporary files of a process that ends without closing them', () => {
  it('are removed when a SIGTERM nobody listens to kills it', async () => {
    const { ended, beside, inTmp } = await leftovers('signal');
    expect(ended).toEqual({ code: null, signal: 'SIGTERM' });
    expect(beside).toEqual([]);
    expect(inTmp).toEqual([]);
  }, 30_000);

  it('are removed when it exits', async () => {
    const { ended, beside, inTmp } = await leftovers('exit');
    expect(ended).toEqual({ code: 3, signal: null });
    expect(beside).toEqual([]);
    expect(inTmp).toEqual([]);
  }, 30_000);
});
