import { mkdir, rename, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DropInputs, SCAN_LIMITS } from '../../src/ui/drop-inputs.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * How the dashboard knows, without listing every file, that a folder's entries may have changed:
 * the folders' own times. Times are set an hour back by hand, so nothing waits for a clock.
 */

const LAYOUT = { processing: 'processing', done: 'done', failed: 'failed' };

async function folder(): Promise<string> {
  const root = await tempDirPerTest('htorder-ui-');
  for (const d of Object.values(LAYOUT)) await mkdir(join(root, d));
  return root;
}

/** Sets the folders' times an hour back, as if nothing had changed in them for that long. */
async function age(root: string): Promise<void> {
  const past = new Date(Date.now() - 3_600_000);
  for (const dir of [root, ...Object.values(LAYOUT).map((d) => join(root, d))]) await utimes(dir, past, past);
}

describe('DropInputs.foldersChanged', () => {
  it('is false while no entry came, went or was renamed over, and true once one did', async () => {
    const root = await folder();
    await writeFile(join(root, 'a.yaml'), 'jobs: []\n');
    const inputs = new DropInputs(root, LAYOUT);
    expect(await inputs.foldersChanged()).toBe(true); // never scanned
    await age(root);
    await inputs.scan();
    expect(await inputs.foldersChanged()).toBe(false);

    // A file dropped by hand.
    await writeFile(join(root, 'b.yaml'), 'jobs: []\n');
    expect(await inputs.foldersChanged()).toBe(true);
    expect(await inputs.scan()).toBe(true);
    expect(inputs.list().map((r) => r.name)).toContain('b.yaml');

    // A report put in place by a rename (as every report is written) into a layout folder.
    await age(root);
    await inputs.scan();
    expect(await inputs.foldersChanged()).toBe(false);
    await writeFile(join(root, 'c.tmp'), '{}');
    await age(root);
    await inputs.scan();
    await rename(join(root, 'c.tmp'), join(root, 'done/c.yaml.result.json'));
    expect(await inputs.foldersChanged()).toBe(true);
  });

  it('a folder changed moments before the scan is looked at again: a second change then may leave its time alone', async () => {
    const root = await folder();
    const inputs = new DropInputs(root, LAYOUT);
    await writeFile(join(root, 'a.yaml'), 'jobs: []\n'); // the drop folder's time is now
    await inputs.scan();
    expect(await inputs.foldersChanged()).toBe(true);
  });

  it('a layout folder that appears or goes is a change', async () => {
    const root = await tempDirPerTest('htorder-ui-');
    const inputs = new DropInputs(root, LAYOUT);
    await utimes(root, new Date(0), new Date(0)); // no layout folder yet
    await inputs.scan();
    expect(await inputs.foldersChanged()).toBe(false);
    await mkdir(join(root, 'done'));
    await utimes(root, new Date(0), new Date(0));
    expect(await inputs.foldersChanged()).toBe(true);
  });
});

describe('DropInputs.list', () => {
  it('lists the names watch would take: not an Office lock file (~$x.xlsx) nor a temporary one', async () => {
    const root = await folder();
    for (const name of ['orders.xlsx', '~$orders.xlsx', 'orders.csv.part', 'orders.csv']) {
      await writeFile(join(root, name), 'x');
    }
    const inputs = new DropInputs(root, LAYOUT);
    await inputs.scan();
    expect(
      inputs
        .list()
        .map((r) => `${r.name} ${r.status}`)
        .sort(),
    ).toEqual(['orders.csv waiting', 'orders.xlsx waiting']);
  });
});

describe('DropInputs.scan past its cap of reports read', () => {
  it('reads the newest reports once and keeps them; older ones are listed unread, not parsed on every view', async () => {
    const root = await folder();
    const cap = SCAN_LIMITS.cachedReports;
    SCAN_LIMITS.cachedReports = 10;
    try {
      const report = (n: string): string =>
        JSON.stringify({ jobs: [{ orderNumber: n, status: 'submitted', jobNumber: 1 }] });
      const paths: string[] = [];
      const base = Date.now() - 3_600_000;
      for (let i = 0; i < 15; i++) {
        const path = join(root, `done/r${String(i).padStart(2, '0')}.yaml.result.json`);
        await writeFile(path, report(`OLD-${String(i).padStart(2, '0')}`));
        // r14 the newest.
        const t = new Date(base + i * 1000);
        await utimes(path, t, t);
        paths.push(path);
      }
      const inputs = new DropInputs(root, LAYOUT);
      await inputs.scan();
      // Each report rewritten in place with the same size and time: only a parse could see it.
      for (const [i, path] of paths.entries()) {
        await writeFile(path, report(`NEW-${String(i).padStart(2, '0')}`));
        const t = new Date(base + i * 1000);
        await utimes(path, t, t);
      }
      await inputs.scan();
      const orders = inputs.list().map((r) => r.digest[0]?.orderNumber ?? r.problem);
      expect(orders.filter((o) => o?.startsWith('OLD-'))).toHaveLength(10);
      expect(orders.filter((o) => o?.startsWith('NEW-'))).toHaveLength(0);
      expect(orders.filter((o) => o?.startsWith('not read'))).toHaveLength(5);
      expect(inputs.list().find((r) => r.name === 'r14.yaml')?.digest[0]?.orderNumber).toBe('OLD-14');
    } finally {
      SCAN_LIMITS.cachedReports = cap;
    }
  });
});
