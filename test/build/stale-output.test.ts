/**
 * `npm run build` removes what an earlier build emitted for a source that is gone, and nothing
 * else: a module left in dist/ would still load by its old path and ship in the package.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error build/ is plain JavaScript without declarations
import { removeStaleOutput } from '../../build/stale-output.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function outDir(files: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'htorder-stale-'));
  dirs.push(dir);
  for (const f of files) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), '');
  }
  return dir;
}

describe('removeStaleOutput', () => {
  it('removes the JavaScript, maps and declarations of sources no longer built, and keeps the rest', () => {
    const dir = outDir([
      'cli/main.js',
      'cli/main.js.map',
      'cli/main.d.ts',
      'report/spool-file.js',
      'report/spool-file.js.map',
      'report/spool-file.d.ts',
      'report/spool-file.d.ts.map',
      'sandbox/snapshot-validator.standalone.cjs',
      'manifest/mapping/preset-signatures.json',
    ]);
    const removed = removeStaleOutput(dir, [join(dir, 'cli/main.js')]) as string[];
    expect(removed.map((p) => p.slice(dir.length + 1)).sort()).toEqual([
      'report/spool-file.d.ts',
      'report/spool-file.d.ts.map',
      'report/spool-file.js',
      'report/spool-file.js.map',
    ]);
    for (const kept of [
      'cli/main.js',
      'cli/main.js.map',
      'cli/main.d.ts',
      'sandbox/snapshot-validator.standalone.cjs',
      'manifest/mapping/preset-signatures.json',
    ])
      expect(existsSync(join(dir, kept)), kept).toBe(true);
    expect(existsSync(join(dir, 'report/spool-file.js'))).toBe(false);
  });

  it('leaves an output folder that does not exist yet alone', () => {
    expect(removeStaleOutput(join(tmpdir(), 'htorder-no-such-dist', String(process.pid)), [])).toEqual([]);
  });
});
