import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, requireDist } from '../support/dist.js';

/**
 * A reader that stops reading (`htorder watch --help | head -1`) closes the pipe under htorder's
 * stdout: the command ends quietly — no EPIPE stack trace — with the exit code it had. Real
 * processes and real pipes, whose reading end is closed before htorder writes anything, so the
 * write fails every time rather than one run in three.
 */

beforeAll(requireDist);

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs `htorder ARGS` with its stdout a pipe this side closes at once. */
function withClosedStdout(args: string[], cwd: string, tmp?: string): Promise<Ended> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...(tmp ? { TMPDIR: tmp } : {}) };
  for (const k of Object.keys(env)) if (k.startsWith('HTORDER_')) delete env[k];
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += String(c);
  });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
}

describe('a closed stdout', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'htorder-pipe-'));
    writeFileSync(join(dir, 'reorder.yaml'), readFileSync(join(ROOT, 'samples/reorder/asset-reorder.yaml')));
  });

  it.each([
    [['--help']],
    [['watch', '--help']],
    [['check', '--json', 'reorder.yaml']],
    [['plan', '--sandbox', '--json', 'reorder.yaml']],
    [['api', 'GET', '/account', '--sandbox']],
    [['sandbox', 'clock']],
  ])('htorder %s: a quiet exit', async (args) => {
    for (let i = 0; i < 2; i++) {
      const ended = await withClosedStdout(args, dir);
      expect(ended.stderr, args.join(' ')).not.toMatch(/EPIPE|internal error|\n\s+at /);
      expect(ended.signal).toBeNull();
      expect(ended.code, `${args.join(' ')}: ${ended.stderr}`).toBe(0);
    }
  });

  it('leaves no --json rows behind when the reader is gone before the summary is written', async () => {
    // The command ends at the failed write, before its own clean-up: the rows' folder goes at exit.
    const tmp = mkdtempSync(join(tmpdir(), 'htorder-pipe-tmp-'));
    const ended = await withClosedStdout(['run', '--sandbox', '--json', 'reorder.yaml'], dir, tmp);
    expect(ended.code, ended.stderr).toBe(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('htorder-json-'))).toEqual([]);
  });
});
