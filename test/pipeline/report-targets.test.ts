import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkInput } from '../../src/cli/check-command.js';
import { reportPaths } from '../../src/report/report-paths.js';
import { stickyStops } from '../../src/storage/sticky-claims.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * Each report is renamed over what is at its name beside the input. What a rename cannot
 * replace (a folder) is found before anything of the input is sent: the input is named with
 * the report and why, nothing is sent, and the other inputs go on (exit 2).
 */

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

const TWO = manifest([
  { orderNumber: 'PO-1', items: ITEMS.reorder },
  { orderNumber: 'PO-2', items: ITEMS.reorder },
]);

describe('a folder at the name of one of an input’s reports', () => {
  for (const kind of ['json', 'csv', 'errors'] as const) {
    it(`(${kind}) stops that input before anything is sent, in run and in plan: exit 2, named, no stack trace`, async () => {
      const file = await h.write('order.yaml', TWO);
      const other = await h.write('other.yaml', manifest([{ orderNumber: 'PO-9', items: ITEMS.reorder }]));
      const blocked = reportPaths(file)[kind];
      await mkdir(blocked);
      await writeFile(join(blocked, 'keep'), 'x');
      for (const command of ['plan', 'run'] as const) {
        const out = await h.cli(command, [file, other]);
        expect(out.code).toBe(2);
        expect(out.stderr).toContain(
          `${file}: its report ${blocked} is a folder, which the report cannot replace: move or remove it first (not processed, no reports written)\n`,
        );
        expect(out.stderr).not.toContain('internal error');
      }
      expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['PO-9']);
      // The folder is left as it was, and nothing else is written beside the input.
      expect(await readdir(blocked)).toEqual(['keep']);
      expect((await readdir(h.workDir)).filter((n) => n.startsWith('order') || n.startsWith('.order')).sort()).toEqual(
        ['order.yaml', `order.yaml${blocked.slice(file.length)}`].sort(),
      );
    });
  }

  it('is said by check the same way (not checked, no reports written)', async () => {
    const file = await h.write('order.yaml', TWO);
    await mkdir(reportPaths(file).errors);
    expect(await checkInput(file)).toEqual({
      file,
      status: 'unreadable',
      problem: `its report ${reportPaths(file).errors} is a folder, which the report cannot replace: move or remove it first`,
    });
  });
});

describe('what a report replaces beside the input', () => {
  it('a symbolic link or a FIFO at a report’s name is replaced, never followed', async () => {
    const file = await h.write('order.yaml', TWO);
    const outside = await h.write('outside.txt', 'not a report\n');
    const paths = reportPaths(file);
    await symlink(outside, paths.json);
    execFileSync('mkfifo', [paths.csv]);
    const out = await h.cli('run', [file]);
    expect(out.code).toBe(0);
    expect(await readFile(outside, 'utf8')).toBe('not a report\n');
    expect((await h.report(file)).summary.byStatus).toMatchObject({ submitted: 2 });
    expect(await readFile(paths.csv, 'utf8')).toContain('PO-2');
  });

  it('in a sticky folder, a file of another user is in the way; one of the user’s own, or in the folder of the user, is not', () => {
    const sticky = { uid: 0, mode: 0o41777 };
    expect(stickyStops({ uid: 1001 }, sticky, 1000)).toBe(true);
    expect(stickyStops({ uid: 1000 }, sticky, 1000)).toBe(false);
    expect(stickyStops({ uid: 1001 }, { uid: 1000, mode: 0o41777 }, 1000)).toBe(false);
    expect(stickyStops({ uid: 1001 }, { uid: 0, mode: 0o40777 }, 1000)).toBe(false);
    // Root is not stopped by the sticky bit.
    expect(stickyStops({ uid: 1001 }, sticky, 0)).toBe(false);
  });
});
