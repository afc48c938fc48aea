import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from '../support/artwork-server.js';
import { CLI, requireDist } from '../support/dist.js';
import { startTestS3, type TestS3 } from '../support/s3.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * `plan`, `run` and `apply` take the artwork settings as flags, spelt as docs/artwork.md and
 * docs/configuration.md spell them, in real processes as a user runs them.
 */

const exec = promisify(execFile);
const FLAGS = [
  '--artwork-check',
  '--artwork-allow-private',
  '--artwork-store',
  '--artwork-public-base-url',
  '--artwork-link-margin-days',
  '--artwork-check-budget-ms',
  '--artwork-max-input-bytes',
];

let s3: TestS3;
beforeAll(async () => {
  requireDist();
  s3 = await startTestS3({ conditional: true });
});
afterAll(async () => {
  await s3.close();
});

async function htorder(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...s3.env, NO_COLOR: '1' };
  for (const k of Object.keys(env)) if (k.startsWith('HTORDER_') && !k.startsWith('HTORDER_S3_')) delete env[k];
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const print = `      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerReference: tiger
        artwork: designs/tiger.png
        attributes: { Colors: 4 }
`;

describe('artwork flags on plan, run and apply', () => {
  it.each(['plan', 'run', 'apply'])('%s --help lists every artwork flag', async (command) => {
    const { stdout } = await htorder([command, '--help'], process.cwd());
    for (const flag of FLAGS) expect(stdout, `${command} ${flag}`).toContain(flag);
  });

  it('plan --out and apply honour --artwork-store and --artwork-check', async () => {
    const dir = await tempDirPerTest('htorder-artflags-');
    await mkdir(join(dir, 'designs'));
    await writeFile(join(dir, 'designs', 'tiger.png'), PNG);
    const file = join(dir, 'tiger.yaml');
    await writeFile(file, manifest([{ orderNumber: 'FLAG-1', items: print }]));
    const flags = ['--artwork-store', `s3://${s3.bucket}/art/`, '--artwork-check', 'off'];

    const none = await htorder(['plan', '--sandbox', file], dir);
    expect(none.code).toBe(1);
    expect(await readFile(`${file}.result.json`, 'utf8')).toContain('artwork.no-store');

    const plan = join(dir, 'plan.json');
    const planned = await htorder(['plan', '--sandbox', ...flags, '--out', plan, file], dir);
    expect(planned.stderr).not.toContain('unknown option');
    expect(planned.code).toBe(0);
    expect(await readFile(`${file}.result.json`, 'utf8')).toContain('artwork.upload');

    const applied = await htorder(['apply', '--sandbox', ...flags, '--json', plan], dir);
    expect(applied.stderr).not.toContain('unknown option');
    expect(applied.code).toBe(0);
    expect(JSON.parse(applied.stdout).inputs[0].jobs[0].status).toBe('submitted');
    expect(s3.requests.filter((r) => r.method === 'PUT' && r.path.includes('/art/')).length).toBe(1);
  });

  it('a bad value of an artwork flag stops the command with exit 2, naming the flag', async () => {
    const dir = await tempDirPerTest('htorder-artflags-bad-');
    const file = join(dir, 'a.yaml');
    await writeFile(file, manifest('BAD'));
    const r = await htorder(['run', '--sandbox', '--artwork-max-input-bytes', 'lots', file], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--artwork-max-input-bytes');
  });
});
