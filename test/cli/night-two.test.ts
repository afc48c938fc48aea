import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, requireDist } from '../support/dist.js';

/**
 * The documented cron recipe, `htorder run … exports/*.csv`, on its second night: the shell's
 * glob hands `run` last night's reports (`X.result.csv`, `X.tracking.csv`, and with `exports/*`
 * `X.result.json` and `X.errors.txt`) beside tonight's export. They are left out with one line
 * each, and the night's exit code is that of its inputs. In real processes, through bash.
 */

const exec = promisify(execFile);
beforeAll(requireDist);

/**
 * The first test is six CLI processes in a row (run, sandbox clock, track, run, check, plan),
 * each loading the CLI and most restoring the sandbox: the night's own work, which a smaller
 * input would not shorten. On a loaded machine (several suites at once on 2 cores) each process
 * gets a fraction of a core, and the night outlasts vitest's default timeout. A timeout only
 * bounds a failing run: a passing run is not slower for it.
 */
const NIGHT_TEST_MS = 180_000;

interface Night {
  code: number;
  stdout: string;
  stderr: string;
}

/** One shell line in `dir`, `htorder` being the built CLI, with this test's state dir. */
async function sh(line: string, dir: string): Promise<Night> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', HTORDER_ARTWORK_CHECK: 'off' };
  for (const k of Object.keys(env)) if (k.startsWith('HTORDER_') && k !== 'HTORDER_ARTWORK_CHECK') delete env[k];
  const script = `htorder() { "${process.execPath}" "${CLI}" "$@"; }; ${line}`;
  try {
    const { stdout, stderr } = await exec('bash', ['-c', script], { cwd: dir, env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const SAMPLE = readFileSync(join(ROOT, 'samples/csv/orders.csv'), 'utf8');
const CSV_HEADER = SAMPLE.split('\n')[0];

describe('a cron glob, night after night', () => {
  it('night 2: last night’s reports beside tonight’s export are skipped, one line each; exit 0', {
    timeout: NIGHT_TEST_MS,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'htorder-night-'));
    mkdirSync(join(dir, 'exports'));
    cpSync(join(ROOT, 'samples/csv/orders.csv'), join(dir, 'exports/night-1.csv'));

    // Night 1, then the sandbox two days on and the shop's tracking file beside the export.
    const first = await sh('htorder run --sandbox exports/*.csv', dir);
    expect(first.code, first.stderr).toBe(0);
    expect((await sh('htorder sandbox clock +2d', dir)).code).toBe(0);
    const tracked = await sh('htorder track --sandbox exports/night-1.csv', dir);
    expect(tracked.code, tracked.stderr).toBe(0);
    expect(existsSync(join(dir, 'exports/night-1.csv.tracking.csv'))).toBe(true);

    // Night 2: a new export beside them.
    const rows = SAMPLE.split('\n').slice(1).join('\n');
    // Other orders (numbers, addresses, quantities): not suspected duplicates of last night's.
    const tonight = rows
      .replaceAll('PO-', 'N2-')
      .replace('1 Main St', '9 Night St')
      .replace('200 Congress Ave', '300 Night Ave')
      .replace('A10001,100', 'A10001,101');
    writeFileSync(join(dir, 'exports/night-2.csv'), `${CSV_HEADER}\n${tonight}`);
    const second = await sh('htorder run --sandbox --json exports/*', dir);
    expect(second.code, second.stderr).toBe(0);
    for (const report of ['result.csv', 'result.json', 'tracking.csv'])
      expect(second.stderr).toContain(
        `htorder run: skipped exports/night-1.csv.${report}: an htorder report, never read as an input\n`,
      );
    const summary = JSON.parse(second.stdout) as { inputs: { file: string; status: string }[]; skipped: string[] };
    expect(summary.inputs.map((i) => [i.file, i.status])).toEqual([
      ['exports/night-1.csv', 'ok'],
      ['exports/night-2.csv', 'ok'],
    ]);
    expect(summary.skipped).toEqual([
      'exports/night-1.csv.result.csv',
      'exports/night-1.csv.result.json',
      'exports/night-1.csv.tracking.csv',
    ]);
    // Nothing was read as an input: no report of a report.
    expect(readdirSync(join(dir, 'exports')).filter((f) => /\.(result|tracking)\.\w+\./.test(f))).toEqual([]);

    // check and plan leave them out the same way; a night with only reports is a quiet night.
    const checked = await sh('htorder check exports/*', dir);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stderr).toContain('htorder check: skipped exports/night-2.csv.result.json');
    const onlyReports = await sh('htorder plan --sandbox exports/*.result.*', dir);
    expect(onlyReports.code, onlyReports.stderr).toBe(0);
  });

  it('an errors.txt of last night is skipped too (not "unsupported file type")', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'htorder-night-'));
    writeFileSync(join(dir, 'broken.csv'), `${CSV_HEADER}\nnot,enough\n`);
    const first = await sh('htorder check broken.csv', dir);
    expect(first.code).toBe(1);
    expect(existsSync(join(dir, 'broken.csv.errors.txt'))).toBe(true);
    const again = await sh('htorder check *', dir);
    expect(again.stderr).toContain('htorder check: skipped broken.csv.errors.txt');
    expect(again.stderr).not.toContain('unsupported file type');
    expect(again.code).toBe(1);
  });
});
