import { spawn, spawnSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
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

/**
 * A run's result.csv written along with its jobs (report/final-result-csv.ts), its first job
 * never ending: the temporary is there, waiting, when the signal comes.
 */
const follower = (input: string) => `
  import { loadManifest } from ${JSON.stringify(join(DIST, 'manifest/load-manifest.js'))};
  import { checkedReport } from ${JSON.stringify(join(DIST, 'report/build-report.js'))};
  import { JobReporter } from ${JSON.stringify(join(DIST, 'pipeline/job-report.js'))};
  import { SpooledReport } from ${JSON.stringify(join(DIST, 'report/spooled-report.js'))};
  import { reportPaths } from ${JSON.stringify(join(DIST, 'report/report-paths.js'))};
  import { FinalResultCsv } from ${JSON.stringify(join(DIST, 'report/final-result-csv.js'))};
  import { existsSync } from 'node:fs';
  const read = await loadManifest(${JSON.stringify(input)});
  const checked = checkedReport({ command: 'run', input: read.input, manifest: read.manifest, diagnostics: read.diagnostics, startedAt: new Date() });
  const reporter = new JobReporter(checked, read.manifest);
  const spooled = await SpooledReport.create(checked.head, checked.jobCount, reporter.pending, reportPaths(read.input.file));
  reporter.spoolTo(spooled.spool);
  const final = await FinalResultCsv.start(spooled, { manifest: read.manifest });
  const made = setInterval(() => {
    if (!existsSync(final.path)) return;
    clearInterval(made);
    setInterval(() => {}, 1000);
    process.stdout.write(JSON.stringify(final.path) + '\\n');
  }, 5);`;

describe("a run's result.csv written along with its jobs, stopped by a signal", () => {
  it('leaves no temporary beside the input (SIGTERM)', async () => {
    const folder = await tempDirPerTest('htorder-report-killed-');
    const input = join(folder, 'orders.csv');
    await writeFile(input, 'orderNumber,deliveryMethod,itemType,code,quantity\nPO-1,UPSGND,Asset,A10001,10\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', follower(input)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
    const made = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (d) => resolve(String(d)));
      child.once('exit', () => reject(new Error(`the follower ended early: ${err}`)));
    });
    expect(JSON.parse(made)).toMatch(/\/\.orders\.csv\.result\.csv\.\d+\.[0-9a-f]{8}\.tmp$/);
    child.kill('SIGTERM');
    expect(await exited).toBe('SIGTERM');
    expect(await readdir(folder)).toEqual(['orders.csv']);
  }, 30_000);
});
