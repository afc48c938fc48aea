import { execFile } from 'node:child_process';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { reportPaths } from '../../src/report/report-paths.js';
import { ReportSpool } from '../../src/report/report-spool.js';
import { temporaryOf } from '../../src/storage/atomic-write.js';
import { captureStdio } from '../support/capture-stdio.js';
import { DIST, requireDist } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * A run's report keeps its ended jobs in temporary files beside the reports (the report's
 * spool): gone once the input is done, whether it succeeded or failed, and a killed run's are
 * removed by a later write of the same reports, as any report temporary is.
 */

const io = captureStdio();
let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

const temporaries = async (dir: string) => (await readdir(dir)).filter((n) => temporaryOf(n) !== undefined);

const THREE = manifest([
  { orderNumber: 'PO-1', items: ITEMS.reorder },
  { orderNumber: 'PO-2', items: ITEMS.reorder },
  { orderNumber: 'PO-3', items: ITEMS.reorder },
]);

describe("the report's spool", () => {
  it('is gone after a run and a plan that succeed', async () => {
    const file = await h.write('order.yaml', THREE);
    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await temporaries(h.workDir)).toEqual([]);
    expect((await h.cli('plan', [file])).code).toBe(0);
    expect((await readdir(h.workDir)).sort()).toEqual([
      'order.yaml',
      'order.yaml.result.csv',
      'order.yaml.result.json',
    ]);
  });

  it('is never made for a run whose reports a folder at their name would refuse: nothing is sent', async () => {
    const file = await h.write('order.yaml', THREE);
    // result.json's name is taken by a folder with something in it: no report could replace it.
    await mkdir(`${file}.result.json`);
    await writeFile(join(`${file}.result.json`, 'keep'), 'x');
    const run = await h.cli('run', [file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`its report ${file}.result.json is a folder`);
    expect(await temporaries(h.workDir)).toEqual([]);
    expect(await h.sandbox.admin.jobs()).toEqual([]);
  });

  it('that cannot be made beside the input (a folder the user may not write) stops that input alone, before anything is sent: exit 2, no stack trace', async () => {
    const file = await h.write('order.yaml', THREE);
    const other = await h.write('other.yaml', manifest([{ orderNumber: 'PO-9', items: ITEMS.reorder }]));
    // What a read-only folder or mount gives a user who is not root: the spool's create is refused.
    const create = ReportSpool.create.bind(ReportSpool);
    const refused = vi.spyOn(ReportSpool, 'create').mockImplementation((paths, ...rest) => {
      if (paths.json !== `${file}.result.json`) return create(paths, ...rest);
      const err = new Error(`EACCES: permission denied, open '${paths.json}.tmp'`);
      return Promise.reject(Object.assign(err, { code: 'EACCES' }));
    });
    try {
      const run = await h.cli('run', [file, other]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `${file}: its reports cannot be written beside it (EACCES) (not processed, no reports written)\n`,
      );
      expect(run.stderr).not.toContain('    at ');
    } finally {
      refused.mockRestore();
    }
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['PO-9']);
    expect(await temporaries(h.workDir)).toEqual([]);
  });

  it('of a killed run is removed by a later write of the same reports, once it is an hour old', async () => {
    requireDist();
    const dir = await tempDirPerTest('htorder-spool-killed-');
    const file = join(dir, 'order.yaml');
    await writeFile(file, THREE);
    // A process makes a spool beside the reports and is killed before it could remove it.
    const spool = pathToFileURL(join(DIST, 'report/report-spool.js')).href;
    const script = `const { ReportSpool } = await import(${JSON.stringify(spool)});
      await ReportSpool.create(${JSON.stringify(reportPaths(file))}, 3, ${JSON.stringify(file)});
      process.kill(process.pid, 'SIGKILL');`;
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]).catch(() => undefined);
    const left = await temporaries(dir);
    expect(left.map((n) => temporaryOf(n)?.target).sort()).toEqual(['order.yaml.errors.txt', 'order.yaml.result.json']);
    const old = new Date(Date.now() - 2 * 3_600_000);
    for (const n of left) await utimes(join(dir, n), old, old);
    expect(await runCli(['check', file]), io.err).toBe(0);
    expect(await temporaries(dir)).toEqual([]);
  });

  it('of a killed run, with the jobs it set aside while one was held back, is removed the same way', async () => {
    requireDist();
    const dir = await tempDirPerTest('htorder-spool-killed-');
    const file = join(dir, 'order.yaml');
    await writeFile(file, THREE);
    // Jobs 1 and 2 end while job 0 runs, past what the spool holds: they go to a side file.
    const spool = pathToFileURL(join(DIST, 'report/report-spool.js')).href;
    const job = (index: number) => ({
      index,
      orderNumber: `PO-${index + 1}`,
      status: 'submitted',
      source: { line: 2 },
      jobNumber: index,
      dateDue: null,
      totalJobCost: 1,
      estimatedCost: null,
      warnings: [],
      errors: [],
      items: [],
    });
    const script = `const { ReportSpool } = await import(${JSON.stringify(spool)});
      const spool = await ReportSpool.create(${JSON.stringify(reportPaths(file))}, 3, ${JSON.stringify(file)}, { heldWeight: 0 });
      spool.end(1, ${JSON.stringify(job(1))});
      spool.end(2, ${JSON.stringify(job(2))});
      await spool.flushed();
      process.kill(process.pid, 'SIGKILL');`;
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]).catch(() => undefined);
    const left = await temporaries(dir);
    expect(left.map((n) => temporaryOf(n)?.target).sort()).toEqual([
      'order.yaml.errors.txt',
      'order.yaml.result.json',
      'order.yaml.result.json',
    ]);
    const old = new Date(Date.now() - 2 * 3_600_000);
    for (const n of left) await utimes(join(dir, n), old, old);
    expect(await runCli(['check', file]), io.err).toBe(0);
    expect(await temporaries(dir)).toEqual([]);
  });
});
