import { spawn, spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIST, requireDist } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * A report write that a signal stops midway leaves none of its temporaries beside the input
 * (core/exit-cleanup.ts), not until a later write an hour on. The input is a FIFO nobody writes
 * to: result.csv's temporary is made, then its write waits for the input's rows for ever, so the
 * signal comes while the write is under way. A real process, killed for real.
 */
const writer = (input: string) => `
  import { writeReports } from ${JSON.stringify(join(DIST, 'report/write-reports.js'))};
  import { readdirSync } from 'node:fs';
  import { dirname } from 'node:path';
  const report = {
    reportVersion: 1, command: 'run', htorderVersion: '0', startedAt: new Date().toISOString(), finishedAt: null,
    input: { file: ${JSON.stringify(input)}, sha256: null, format: 'csv' },
    summary: { jobs: 0, items: 0, errors: 0, warnings: 0, byStatus: {} }, errors: [], warnings: [], jobs: [],
  };
  void writeReports(report, { worker: false });
  const made = setInterval(() => {
    const names = readdirSync(dirname(${JSON.stringify(input)})).filter((n) => n.endsWith('.tmp'));
    if (names.length < 2) return;
    clearInterval(made);
    setInterval(() => {}, 1000);
    process.stdout.write(JSON.stringify(names) + '\\n');
  }, 5);`;

beforeAll(() => requireDist());

describe('a report write stopped by a signal', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'leaves no temporary beside the input (%s)',
    async (signal) => {
      const folder = await tempDirPerTest('htorder-report-killed-');
      const input = join(folder, 'orders.csv');
      expect(spawnSync('mkfifo', [input]).status).toBe(0);
      const child = spawn(process.execPath, ['--input-type=module', '-e', writer(input)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
      const made = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (d) => resolve(String(d)));
        child.once('exit', () => reject(new Error(`the writer ended early: ${err}`)));
      });
      // The temporaries were there, the write under way.
      expect(JSON.parse(made)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^\.orders\.csv\.result\.csv\.\d+\.[0-9a-f]{8}\.tmp$/)]),
      );
      child.kill(signal);
      expect(await exited).toBe(signal);
      expect(await readdir(folder)).toEqual(['orders.csv']);
    },
    30_000,
  );
});
